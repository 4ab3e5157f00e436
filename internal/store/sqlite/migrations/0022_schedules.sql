-- Schedules stored with kiln apply, per project. spec is what was
-- applied; status (JSON) what the leader did with it, and last_tick (Unix
-- nanoseconds, NULL: none yet) the latest tick it dealt with, kept apart
-- so that a status is only ever stored over an older one.
CREATE TABLE schedules (
    project    TEXT NOT NULL,
    name       TEXT NOT NULL,
    metadata   TEXT NOT NULL,
    spec       TEXT NOT NULL,
    status     TEXT NOT NULL DEFAULT '{}',
    last_tick  INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (project, name)
);
