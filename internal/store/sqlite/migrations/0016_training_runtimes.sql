-- Training runtimes stored with kiln apply: TrainingRuntimes per project
-- and ClusterTrainingRuntimes (project '') for all. Every version is kept
-- (a run's record names the one it used); training_runtimes points at the
-- current version of each runtime that has not been deleted. IF NOT
-- EXISTS: a test takes a store back to before 0015 and migrates it again.
CREATE TABLE IF NOT EXISTS training_runtime_versions (
    kind       TEXT NOT NULL,
    project    TEXT NOT NULL,
    name       TEXT NOT NULL,
    version    INTEGER NOT NULL,
    metadata   TEXT NOT NULL,
    spec       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (kind, project, name, version)
) STRICT, WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS training_runtimes (
    kind       TEXT NOT NULL,
    project    TEXT NOT NULL,
    name       TEXT NOT NULL,
    version    INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (kind, project, name)
) STRICT, WITHOUT ROWID;
