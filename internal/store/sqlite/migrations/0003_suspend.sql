-- A run's training jobs can be suspended: stopped, resources released,
-- until the flag is cleared.
ALTER TABLE runs ADD COLUMN suspend INTEGER NOT NULL DEFAULT 0;
