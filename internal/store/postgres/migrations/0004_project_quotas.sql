-- Project quotas (ProjectQuota): spec is the quota's spec as JSON, read
-- back by kiln alone (SQLite's 0023).
CREATE TABLE project_quotas (
    project    TEXT NOT NULL PRIMARY KEY,
    spec       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
