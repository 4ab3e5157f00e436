-- Events without AUTOINCREMENT (issue 37): a plain INTEGER PRIMARY KEY
-- numbers a new event one past the greatest, as AUTOINCREMENT did, but
-- without writing the sqlite_sequence table in every transaction that
-- appends events: one page, and a WAL frame, less in each engine round.
-- A number is used again only after the events above it were deleted,
-- which happens only with their run, and a run's events are read by run:
-- each run's own events still count up. SQLite cannot drop AUTOINCREMENT
-- in place, so the table is made anew.
CREATE TABLE events_new (
    seq     INTEGER PRIMARY KEY,
    run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    node    TEXT NOT NULL DEFAULT '',
    attempt INTEGER NOT NULL DEFAULT 0,
    phase   TEXT NOT NULL,
    reason  TEXT NOT NULL,
    code    TEXT NOT NULL DEFAULT '',
    message TEXT NOT NULL DEFAULT '',
    time    INTEGER NOT NULL,
    term    INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO events_new (seq, run_id, node, attempt, phase, reason, code, message, time, term)
    SELECT seq, run_id, node, attempt, phase, reason, code, message, time, term FROM events;
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE INDEX events_by_run ON events (run_id, seq);
DELETE FROM sqlite_sequence WHERE name = 'events';
