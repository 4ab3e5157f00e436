-- An attempt that failed because of the machine (a lost supervisor, an
-- evicted pod) counts against the engine's system budget, not the task's
-- retries; a run knows the directory its tasks start in.
ALTER TABLE attempts ADD COLUMN system INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN work_dir TEXT NOT NULL DEFAULT '';
