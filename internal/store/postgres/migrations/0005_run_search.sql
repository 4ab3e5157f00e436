-- The runs list's search (SQLite's 0024): indices of the creation order,
-- and of phase then creation order, that also hold the name (and, for
-- the first, phase and project), so that an index-only scan tests a
-- search without reading the runs' rows. Each starts with the columns of
-- the index it replaces.
CREATE INDEX runs_search ON runs (created_at DESC, id DESC, name, phase, project);
DROP INDEX runs_by_created;
CREATE INDEX runs_by_phase_name ON runs (phase, created_at DESC, id DESC, name);
DROP INDEX runs_by_phase;
