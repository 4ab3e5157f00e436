-- Schedules stored with kiln apply, per project (SQLite's 0022). status
-- is what the leader did with one (JSON); last_tick (Unix nanoseconds,
-- NULL: none yet) the latest tick it dealt with, so that a status is only
-- ever stored over an older one.
CREATE TABLE schedules (
    project    TEXT NOT NULL,
    name       TEXT NOT NULL,
    metadata   TEXT NOT NULL,
    spec       TEXT NOT NULL,
    status     TEXT NOT NULL DEFAULT '{}',
    last_tick  BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (project, name)
);
