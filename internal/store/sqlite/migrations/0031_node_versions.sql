-- Node versions (issue 35): each write that changes what a run's nodes
-- show (their columns, attempts, expansions, trainer status, shares,
-- artifacts) counts the run's node_version up once and stamps the nodes
-- it touched with it, so that a reader holding the nodes as of a version
-- asks for those changed since (version > it), as a Kubernetes client
-- does with a resourceVersion. Pages of nodes follow their position.
ALTER TABLE runs ADD COLUMN node_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
CREATE INDEX nodes_by_position ON nodes (run_id, position);
