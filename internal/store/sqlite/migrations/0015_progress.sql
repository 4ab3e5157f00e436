-- A run keeps its progress (JSON of apiv1.RunProgress: its tasks counted
-- by phase), written by its engine with its status, so that listing runs
-- reads no nodes. Runs stored before are counted once, here, the way
-- the engine counts: every node but those that expanded into children.
ALTER TABLE runs ADD COLUMN progress TEXT NOT NULL DEFAULT '';
UPDATE runs SET progress = (
    SELECT json_object('total', COUNT(*),
        'done', COALESCE(SUM(phase IN ('Succeeded', 'Failed', 'Skipped', 'Cancelled')), 0),
        'succeeded', COALESCE(SUM(phase = 'Succeeded'), 0), 'failed', COALESCE(SUM(phase = 'Failed'), 0),
        'skipped', COALESCE(SUM(phase = 'Skipped'), 0), 'cancelled', COALESCE(SUM(phase = 'Cancelled'), 0),
        'running', COALESCE(SUM(phase = 'Running'), 0))
    FROM nodes WHERE nodes.run_id = runs.id AND nodes.children = '');
-- What a training job's processes last reported of their progress (JSON
-- of apiv1.TrainerStatus), in a table of its own: few nodes have one, and
-- the nodes table's statements stay as they are.
CREATE TABLE node_trainer_status (
    run_id TEXT NOT NULL,
    node   TEXT NOT NULL,
    status TEXT NOT NULL,
    PRIMARY KEY (run_id, node),
    FOREIGN KEY (run_id, node) REFERENCES nodes (run_id, name) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;
