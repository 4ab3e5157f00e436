-- The bytes each log of an attempt could not hold (the disk was full): a
-- JSON object of log name to bytes, '' if every byte was kept.
ALTER TABLE attempts ADD COLUMN logs_lost TEXT NOT NULL DEFAULT '';
