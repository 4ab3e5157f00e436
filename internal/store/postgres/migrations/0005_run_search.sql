-- The runs list's search (SQLite's 0024): an index of the creation order
-- that also holds the name, phase and project, so that an index-only
-- scan tests a search without reading the runs' rows. It starts with
-- runs_by_created's columns and replaces it.
CREATE INDEX runs_search ON runs (created_at DESC, id DESC, name, phase, project);
DROP INDEX runs_by_created;
