-- The runs list at 100,000 runs (SQLite's 0033, issue 37): a table of the
-- runs' labels, indexed in the list's order, and the runs counted by
-- phase, kept by triggers in the transaction of every write that adds a
-- run, removes one or changes its phase, whichever replica writes it.
CREATE TABLE run_labels (
    run_id     TEXT COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key        TEXT COLLATE "C" NOT NULL,
    value      TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE INDEX run_labels_by_value ON run_labels (key, value, created_at DESC, run_id DESC);
CREATE INDEX run_labels_by_key ON run_labels (key, created_at DESC, run_id DESC);
INSERT INTO run_labels (run_id, key, value, created_at)
    SELECT runs.id, l.key, l.value, runs.created_at FROM runs,
    jsonb_each_text(CASE WHEN jsonb_typeof(runs.labels::jsonb) = 'object' THEN runs.labels::jsonb ELSE '{}' END) l; -- a run without labels may hold null

CREATE TABLE run_counts (
    phase TEXT COLLATE "C" PRIMARY KEY,
    n     BIGINT NOT NULL
);
INSERT INTO run_counts (phase, n) SELECT phase, COUNT(*) FROM runs GROUP BY phase;
CREATE FUNCTION kiln_count_runs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE run_counts SET n = n - 1 WHERE phase = OLD.phase;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO run_counts (phase, n) VALUES (NEW.phase, 1)
            ON CONFLICT (phase) DO UPDATE SET n = run_counts.n + 1;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER run_counts_insert_delete AFTER INSERT OR DELETE ON runs
    FOR EACH ROW EXECUTE FUNCTION kiln_count_runs();
CREATE TRIGGER run_counts_update AFTER UPDATE OF phase ON runs
    FOR EACH ROW WHEN (OLD.phase IS DISTINCT FROM NEW.phase) EXECUTE FUNCTION kiln_count_runs();
