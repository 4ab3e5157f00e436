-- The one replica that runs the engine when several serve one store: its
-- lease, and its term, which only grows and fences every write it makes.
CREATE TABLE leadership (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	holder  TEXT NOT NULL,
	address TEXT NOT NULL DEFAULT '',
	term    INTEGER NOT NULL,
	since   INTEGER NOT NULL,
	until   INTEGER NOT NULL
);

-- The term of the leader that holds a run's lease (0: an engine that is
-- no leader, such as kiln run), so that a new leader takes over the runs
-- of an earlier one at once.
ALTER TABLE runs ADD COLUMN lease_term INTEGER NOT NULL DEFAULT 0;

-- The term each event was written under (0: none), so what a leader wrote
-- after its term ended could be found: nothing, as the fence refuses it.
ALTER TABLE events ADD COLUMN term INTEGER NOT NULL DEFAULT 0;
