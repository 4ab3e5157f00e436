-- A node keeps its kind (command, train, gate, ...), and a gate task what
-- it waits for and how its wait ended (JSON of apiv1.GateStatus; '' for
-- other tasks). What users send to waiting gates
-- (approvals, rejections, signals) is kept in the order it arrived; the
-- run's owner reads it and decides.
ALTER TABLE nodes ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN gate TEXT NOT NULL DEFAULT '';

CREATE TABLE gate_inputs (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id  TEXT NOT NULL,
    node    TEXT NOT NULL,
    approve INTEGER, -- NULL: not an approval; 1 approves, 0 rejects
    value   TEXT,    -- NULL: not a signal
    reason  TEXT NOT NULL DEFAULT '',
    sent_by TEXT NOT NULL DEFAULT '',
    at      INTEGER NOT NULL,
    FOREIGN KEY (run_id, node) REFERENCES nodes (run_id, name) ON DELETE CASCADE
) STRICT;
CREATE INDEX gate_inputs_by_run ON gate_inputs (run_id, seq);
