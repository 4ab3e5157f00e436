-- Runs can be deleted: some time after they finished (the spec's
-- ttlSecondsAfterFinished), or when newer runs of their name push them
-- over its history limit (spec.historyLimit). Both are copied from the
-- spec when the run is created, so the collector finds due runs without
-- reading specs. NULL: the spec does not say.
ALTER TABLE runs ADD COLUMN ttl_seconds INTEGER;
ALTER TABLE runs ADD COLUMN keep_succeeded INTEGER;
ALTER TABLE runs ADD COLUMN keep_failed INTEGER;
CREATE INDEX runs_expiring ON runs (finished_at) WHERE done = 1 AND ttl_seconds IS NOT NULL;
CREATE INDEX runs_history ON runs (name, project, created_at DESC, id DESC) WHERE done = 1;
