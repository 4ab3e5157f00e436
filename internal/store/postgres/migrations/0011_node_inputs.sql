-- What each reference of a node's last attempt resolved to (SQLite's 0030).
CREATE TABLE node_inputs (
    run_id TEXT COLLATE "C" NOT NULL,
    node   TEXT COLLATE "C" NOT NULL,
    inputs TEXT NOT NULL,
    PRIMARY KEY (run_id, node),
    FOREIGN KEY (run_id, node) REFERENCES nodes (run_id, name) ON DELETE CASCADE
);
