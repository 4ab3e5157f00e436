-- WorkflowTemplates stored with kiln apply, per project: runs of the
-- project run them by name as subworkflows. A run keeps the ones it uses
-- (run_specs.subworkflows), so replacing or deleting a template changes
-- only the runs submitted after.
CREATE TABLE workflow_templates (
    project    TEXT NOT NULL,
    name       TEXT NOT NULL,
    metadata   TEXT NOT NULL,
    spec       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (project, name)
) STRICT, WITHOUT ROWID;
