-- Nodes of every kind: a map's items, a dynamic task's fragment and a
-- subworkflow's tasks are nodes too, made while the run goes on, under
-- their parent. A node that expanded keeps what it expanded into (a map's
-- items, a fragment) in a table of its own, written once: a map's node is
-- updated every round its items end, and SQLite rewrites a whole row. A
-- run keeps the subworkflows it runs and its outputs.
ALTER TABLE nodes ADD COLUMN parent TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN children TEXT NOT NULL DEFAULT '';
CREATE TABLE node_expansions (
    run_id    TEXT NOT NULL,
    node      TEXT NOT NULL,
    expansion TEXT NOT NULL,
    PRIMARY KEY (run_id, node),
    FOREIGN KEY (run_id, node) REFERENCES nodes (run_id, name) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;
ALTER TABLE run_specs ADD COLUMN subworkflows TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN outputs TEXT NOT NULL DEFAULT '';
