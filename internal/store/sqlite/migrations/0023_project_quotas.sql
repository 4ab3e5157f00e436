-- Project quotas (ProjectQuota): spec is the quota's spec as JSON, read
-- back by kiln alone. IF NOT EXISTS: a test takes a store back to before
-- 0015 and migrates it again.
CREATE TABLE IF NOT EXISTS project_quotas (
    project    TEXT NOT NULL PRIMARY KEY,
    spec       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;
