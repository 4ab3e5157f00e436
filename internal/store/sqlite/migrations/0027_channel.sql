-- The federation channel (issue 33): the log of every message a party's
-- part sent or received, and the pieces of the received ones until their
-- share takes them or the part ends.
CREATE TABLE channel_messages (
    run_id    TEXT NOT NULL,
    direction TEXT NOT NULL,
    task      TEXT NOT NULL,
    attempt   INTEGER NOT NULL,
    role      TEXT NOT NULL,
    party     TEXT NOT NULL,
    peer_role TEXT NOT NULL,
    name      TEXT NOT NULL,
    size      INTEGER NOT NULL,
    digest    TEXT NOT NULL,
    chunks    INTEGER NOT NULL,
    arrived   INTEGER NOT NULL DEFAULT 0,
    at        INTEGER NOT NULL DEFAULT 0,
    taken     INTEGER,
    PRIMARY KEY (run_id, direction, task, attempt, role, party, peer_role, name)
);

CREATE TABLE channel_chunks (
    run_id    TEXT NOT NULL,
    task      TEXT NOT NULL,
    attempt   INTEGER NOT NULL,
    role      TEXT NOT NULL,
    party     TEXT NOT NULL,
    peer_role TEXT NOT NULL,
    name      TEXT NOT NULL,
    idx       INTEGER NOT NULL,
    data      BLOB NOT NULL,
    PRIMARY KEY (run_id, task, attempt, role, party, peer_role, name, idx)
);

-- When a part's initiator was last heard from (issue 33): a host ends a
-- part whose initiator is silent longer than its --party-idle-timeout.
CREATE TABLE part_heard (
    run_id TEXT NOT NULL PRIMARY KEY,
    at     INTEGER NOT NULL
);

-- The code a party's own order ends a share with (its idle timeout);
-- '' for the initiator's orders.
ALTER TABLE share_orders ADD COLUMN code TEXT NOT NULL DEFAULT '';

-- What a party's parts may do here (a JSON apiv1.PartyPolicy; '': nothing).
ALTER TABLE parties ADD COLUMN policy TEXT NOT NULL DEFAULT '';

-- The certificate a party's https server must present, pinned
-- ("sha256:<hex>"; '': the system's roots decide).
ALTER TABLE parties ADD COLUMN pin TEXT NOT NULL DEFAULT '';

-- The other parties' output parameters a share reads, fetched when its
-- start was ordered (a JSON object TASK.PARAM -> value; '': none).
ALTER TABLE share_orders ADD COLUMN inputs TEXT NOT NULL DEFAULT '';
