-- Node versions (issue 35; SQLite's 0030): each write that changes what a
-- run's nodes show counts the run's node_version up once and stamps the
-- nodes it touched with it, so that a reader holding the nodes as of a
-- version asks for those changed since. Pages of nodes follow their
-- position.
ALTER TABLE runs ADD COLUMN node_version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
CREATE INDEX nodes_by_position ON nodes (run_id, position);
