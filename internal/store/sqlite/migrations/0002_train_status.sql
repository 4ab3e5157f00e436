-- Training jobs keep Trainer-style conditions and per-replica-group counts.
ALTER TABLE nodes ADD COLUMN conditions TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN replicas TEXT NOT NULL DEFAULT '';
