-- Submission keys (issue 34): the Idempotency-Key a run was created with,
-- in its project, and a digest of what was submitted. Written in the
-- transaction that creates the run and deleted with it; a key older than
-- the server's window has expired and is removed when another is stored.
CREATE TABLE submit_keys (
    project    TEXT NOT NULL,
    idem_key   TEXT NOT NULL,
    digest     TEXT NOT NULL,
    run_id     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project, idem_key)
);

CREATE INDEX submit_keys_run ON submit_keys (run_id);
CREATE INDEX submit_keys_created ON submit_keys (created_at);
