-- What each reference of a node's last attempt resolved to (JSON of
-- apiv1.NodeStatus.Inputs), in a table of its own: the nodes table's
-- statements stay as they are.
CREATE TABLE node_inputs (
    run_id TEXT NOT NULL,
    node   TEXT NOT NULL,
    inputs TEXT NOT NULL,
    PRIMARY KEY (run_id, node),
    FOREIGN KEY (run_id, node) REFERENCES nodes (run_id, name) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;
