-- The output artifacts a task stored in the artifact repository (SQLite's
-- 0025): a JSON list of apiv1.CachedArtifact, one row per node.
CREATE TABLE node_artifacts (
    run_id    TEXT COLLATE "C" NOT NULL,
    node      TEXT COLLATE "C" NOT NULL,
    artifacts TEXT NOT NULL,
    PRIMARY KEY (run_id, node)
);
