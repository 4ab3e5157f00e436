-- Runs belong to a project; API tokens are kept hashed, scoped to projects.
ALTER TABLE runs ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
CREATE INDEX runs_by_project ON runs (project, created_at DESC, id DESC);
CREATE INDEX runs_by_phase ON runs (phase, created_at DESC, id DESC);
CREATE INDEX runs_by_name ON runs (name, created_at DESC, id DESC);

CREATE TABLE tokens (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    hash       TEXT NOT NULL UNIQUE,
    role       TEXT NOT NULL,
    projects   TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked    INTEGER NOT NULL DEFAULT 0
) STRICT;
