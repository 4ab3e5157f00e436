-- The time a run spent suspended (a JSON apiv1.Suspension, '' if it never
-- was): its timeout counts only the rest.
ALTER TABLE runs ADD COLUMN suspension TEXT NOT NULL DEFAULT '';
