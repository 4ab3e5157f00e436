-- Nodes of every kind: a map's items, a dynamic task's fragment and a
-- subworkflow's tasks are nodes too, made while the run goes on, under
-- their parent; a node keeps what it expanded into. A run keeps the subworkflows it runs and its outputs.
ALTER TABLE nodes ADD COLUMN parent TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN children TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN expansion TEXT NOT NULL DEFAULT '';
ALTER TABLE run_specs ADD COLUMN subworkflows TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN outputs TEXT NOT NULL DEFAULT '';
