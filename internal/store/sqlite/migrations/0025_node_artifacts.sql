-- The output artifacts a task stored in the artifact repository as it
-- succeeded (a JSON list of apiv1.CachedArtifact: name, path, digest,
-- size, a directory's files), one row per node that stored any.
CREATE TABLE node_artifacts (
	run_id    TEXT NOT NULL,
	node      TEXT NOT NULL,
	artifacts TEXT NOT NULL,
	PRIMARY KEY (run_id, node)
);
