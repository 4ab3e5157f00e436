-- Reruns (kiln rerun): a run made from another run's stored spec names
-- its source, and some of its nodes are made in a final phase instead of
-- Pending: the tasks it reuses (Succeeded, with where their result came
-- from) and those it leaves out (Skipped). kiln retry of a rerun leaves
-- these preset nodes as they are.
ALTER TABLE run_specs ADD COLUMN rerun_of TEXT NOT NULL DEFAULT '';
CREATE TABLE preset_nodes (
    run_id TEXT NOT NULL,
    node   TEXT NOT NULL,
    reused TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, node),
    FOREIGN KEY (run_id, node) REFERENCES nodes (run_id, name) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;
