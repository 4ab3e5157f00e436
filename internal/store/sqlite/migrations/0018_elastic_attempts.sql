-- An elastic training job's attempt records how many nodes admission gave
-- it, how many joined later, and which it lost and went on without (a
-- JSON list of process names).
ALTER TABLE attempts ADD COLUMN nodes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN joined INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN dropped TEXT NOT NULL DEFAULT '';
