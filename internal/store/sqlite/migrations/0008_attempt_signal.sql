-- An attempt ended by a signal records the signal, not an exit code.
ALTER TABLE attempts ADD COLUMN signal TEXT NOT NULL DEFAULT '';
