-- The time a run spent suspended (SQLite's 0026): a JSON apiv1.Suspension,
-- '' if it never was.
ALTER TABLE runs ADD COLUMN suspension TEXT NOT NULL DEFAULT '';
