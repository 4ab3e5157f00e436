-- The runs list at 100,000 runs (issue 37). A label selector tested each
-- run's labels JSON, reading every row the list order handed over (2.45 s
-- a page for a rare label), and /metrics counted the runs by phase with a
-- scan of an index of every run (225 ms a scrape).
--
-- run_labels holds one row per label of a run, written with the run
-- (CreateRun; labels never change after) and deleted with it (DeleteRun),
-- with the run's created_at beside it, so that a selector's page is read
-- from an index in the list's order: by key and value (=, in), or by key
-- (exists), each then in created_at and ID order, newest first.
--
-- IF NOT EXISTS, and each table filled afresh: a test takes a store back
-- to before 0015 and migrates again.
CREATE TABLE IF NOT EXISTS run_labels (
    run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS run_labels_by_value ON run_labels (key, value, created_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS run_labels_by_key ON run_labels (key, created_at DESC, run_id DESC);
DELETE FROM run_labels;
INSERT INTO run_labels (run_id, key, value, created_at)
    SELECT runs.id, l.key, CAST(l.value AS TEXT), runs.created_at FROM runs,
    json_each(CASE WHEN json_type(runs.labels) = 'object' THEN runs.labels ELSE '{}' END) l; -- a run without labels may hold null

-- run_counts holds how many runs each phase has. Triggers keep it in the
-- transaction of every write that adds a run, removes one or changes its
-- phase, whichever statement and whichever process writes it, so that it
-- is true after a crash and beside other writers of the file. A phase
-- whose runs are gone keeps a row with n = 0.
CREATE TABLE IF NOT EXISTS run_counts (
    phase TEXT PRIMARY KEY,
    n     INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
DELETE FROM run_counts;
INSERT INTO run_counts (phase, n) SELECT phase, COUNT(*) FROM runs GROUP BY phase;
CREATE TRIGGER IF NOT EXISTS run_counts_insert AFTER INSERT ON runs BEGIN
    INSERT INTO run_counts (phase, n) VALUES (NEW.phase, 1) ON CONFLICT (phase) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS run_counts_delete AFTER DELETE ON runs BEGIN
    UPDATE run_counts SET n = n - 1 WHERE phase = OLD.phase;
END;
CREATE TRIGGER IF NOT EXISTS run_counts_update AFTER UPDATE OF phase ON runs WHEN OLD.phase <> NEW.phase BEGIN
    UPDATE run_counts SET n = n - 1 WHERE phase = OLD.phase;
    INSERT INTO run_counts (phase, n) VALUES (NEW.phase, 1) ON CONFLICT (phase) DO UPDATE SET n = n + 1;
END;
