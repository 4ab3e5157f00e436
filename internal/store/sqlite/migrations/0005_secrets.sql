-- Secrets that task environments reference, per project. Values are read
-- only to start processes; no API route returns them.
CREATE TABLE secrets (
    project    TEXT NOT NULL,
    name       TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (project, name)
) STRICT, WITHOUT ROWID;
