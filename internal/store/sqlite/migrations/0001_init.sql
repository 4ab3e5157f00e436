CREATE TABLE runs (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    kind             TEXT NOT NULL,
    labels           TEXT NOT NULL DEFAULT '{}',
    params           TEXT NOT NULL DEFAULT '{}',
    source           TEXT NOT NULL DEFAULT '',
    created_at       INTEGER NOT NULL,
    phase            TEXT NOT NULL,
    code             TEXT NOT NULL DEFAULT '',
    message          TEXT NOT NULL DEFAULT '',
    started_at       INTEGER,
    finished_at      INTEGER,
    done             INTEGER NOT NULL DEFAULT 0,
    owner            TEXT NOT NULL DEFAULT '',
    lease_until      INTEGER NOT NULL DEFAULT 0,
    cancel_requested INTEGER NOT NULL DEFAULT 0
) STRICT;
-- The spec is written once and can be large: it lives apart from the run
-- row, which every reconcile round may rewrite.
CREATE TABLE run_specs (
    run_id   TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    workflow TEXT NOT NULL
) STRICT;

CREATE INDEX runs_by_created ON runs (created_at DESC, id DESC);
CREATE INDEX runs_unfinished ON runs (done, owner);

CREATE TABLE nodes (
    run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    name        TEXT NOT NULL,
    phase       TEXT NOT NULL,
    code        TEXT NOT NULL DEFAULT '',
    message     TEXT NOT NULL DEFAULT '',
    started_at  INTEGER,
    finished_at INTEGER,
    retry_at    INTEGER,
    outputs     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, name)
) STRICT, WITHOUT ROWID;

CREATE TABLE attempts (
    run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    node        TEXT NOT NULL,
    number      INTEGER NOT NULL,
    id          TEXT NOT NULL,
    phase       TEXT NOT NULL,
    exit_code   INTEGER,
    code        TEXT NOT NULL DEFAULT '',
    message     TEXT NOT NULL DEFAULT '',
    started_at  INTEGER,
    finished_at INTEGER,
    PRIMARY KEY (run_id, node, number)
) STRICT, WITHOUT ROWID;

CREATE TABLE events (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    node    TEXT NOT NULL DEFAULT '',
    attempt INTEGER NOT NULL DEFAULT 0,
    phase   TEXT NOT NULL,
    reason  TEXT NOT NULL,
    code    TEXT NOT NULL DEFAULT '',
    message TEXT NOT NULL DEFAULT '',
    time    INTEGER NOT NULL
) STRICT;
CREATE INDEX events_by_run ON events (run_id, seq);
