-- A run retried after failure resets its unfinished tasks; attempts up to
-- attempt_base belong to earlier tries and do not count against retries.
ALTER TABLE nodes ADD COLUMN attempt_base INTEGER NOT NULL DEFAULT 0;
