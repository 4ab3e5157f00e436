-- The federation channel (issue 33; SQLite's 0027): the log of every message a party's
-- part sent or received, and the pieces of the received ones until their
-- share takes them or the part ends.
CREATE TABLE channel_messages (
    run_id    TEXT COLLATE "C" NOT NULL,
    direction TEXT COLLATE "C" NOT NULL,
    task      TEXT COLLATE "C" NOT NULL,
    attempt   BIGINT NOT NULL,
    role      TEXT COLLATE "C" NOT NULL,
    party     TEXT COLLATE "C" NOT NULL,
    peer_role TEXT COLLATE "C" NOT NULL,
    name      TEXT COLLATE "C" NOT NULL,
    size      BIGINT NOT NULL,
    digest    TEXT COLLATE "C" NOT NULL,
    chunks    BIGINT NOT NULL,
    arrived   BIGINT NOT NULL DEFAULT 0,
    at        BIGINT NOT NULL DEFAULT 0,
    taken     BIGINT,
    PRIMARY KEY (run_id, direction, task, attempt, role, party, peer_role, name)
);

CREATE TABLE channel_chunks (
    run_id    TEXT COLLATE "C" NOT NULL,
    task      TEXT COLLATE "C" NOT NULL,
    attempt   BIGINT NOT NULL,
    role      TEXT COLLATE "C" NOT NULL,
    party     TEXT COLLATE "C" NOT NULL,
    peer_role TEXT COLLATE "C" NOT NULL,
    name      TEXT COLLATE "C" NOT NULL,
    idx       BIGINT NOT NULL,
    data      BYTEA NOT NULL,
    PRIMARY KEY (run_id, task, attempt, role, party, peer_role, name, idx)
);

-- When a part's initiator was last heard from (issue 33): a host ends a
-- part whose initiator is silent longer than its --party-idle-timeout.
CREATE TABLE part_heard (
    run_id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    at     BIGINT NOT NULL
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
