-- An elastic training job's attempt records how many nodes admission gave
-- it and which of them it lost and went on without (JSON list of names).
ALTER TABLE attempts ADD COLUMN nodes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN dropped TEXT NOT NULL DEFAULT '';
