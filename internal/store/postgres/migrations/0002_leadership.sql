-- The one replica that runs the engine: its lease, and its term, which
-- only grows and fences every write it makes (SQLite's 0021).
CREATE TABLE leadership (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    holder  TEXT NOT NULL,
    address TEXT NOT NULL DEFAULT '',
    term    BIGINT NOT NULL,
    since   BIGINT NOT NULL,
    until   BIGINT NOT NULL
);

-- The term of the leader that holds a run's lease (0: an engine that
-- leads nothing), so that a new leader takes over an earlier one's runs.
ALTER TABLE runs ADD COLUMN lease_term BIGINT NOT NULL DEFAULT 0;

-- The term each event was written under (0: none).
ALTER TABLE events ADD COLUMN term BIGINT NOT NULL DEFAULT 0;
