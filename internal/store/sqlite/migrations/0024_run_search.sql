-- The runs list's search (kiln get runs --search, GET /api/v1/runs?q=)
-- tests each run's ID and name. Two indices hold the name beside the
-- order they are read in, so that the test reads the index, not the
-- runs' rows with their workflows, and only the runs kept are fetched:
-- runs_search, in creation order (with phase and project, for searches
-- that also filter by them), and runs_by_phase_name, for a search within
-- phases. At 100,000 runs a search that matches none takes half the
-- time, and a search within two phases a third. Each starts with the
-- columns of the index it replaces; two indices on the same order would
-- leave the planner free to pick the one that reads the rows. IF NOT
-- EXISTS: a test takes a store back to before 0015 and migrates again.
CREATE INDEX IF NOT EXISTS runs_search ON runs (created_at DESC, id DESC, name, phase, project);
DROP INDEX IF EXISTS runs_by_created;
CREATE INDEX IF NOT EXISTS runs_by_phase_name ON runs (phase, created_at DESC, id DESC, name);
DROP INDEX IF EXISTS runs_by_phase;
