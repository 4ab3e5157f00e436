-- The cache's index: the results stored under each key (the artifacts'
-- bytes live in KILN_HOME/cache, content-addressed), and the keys being
-- computed now, so that two runs that miss one key compute it once. A
-- reservation lives as long as its owner's leases (RenewLeases extends
-- it). A run keeps how it uses the cache; a node, what the cache did.
CREATE TABLE cache_entries (
    key         TEXT PRIMARY KEY,
    project     TEXT NOT NULL,
    workflow    TEXT NOT NULL,
    task        TEXT NOT NULL,
    entry       TEXT NOT NULL,
    size        INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    used_at     INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL DEFAULT 0
) STRICT, WITHOUT ROWID;
CREATE INDEX cache_entries_used ON cache_entries (used_at);
CREATE TABLE cache_reservations (
    key    TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    owner  TEXT NOT NULL,
    until  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX cache_reservations_owner ON cache_reservations (owner);
ALTER TABLE runs ADD COLUMN cache_mode TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN cache TEXT NOT NULL DEFAULT '';
