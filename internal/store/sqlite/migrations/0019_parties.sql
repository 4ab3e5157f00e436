-- The parties this server federates with. credential_hash is the SHA-256
-- of the credential this server issued to the party (the party presents
-- it when it calls); credential is the one the party issued to this
-- server (presented when calling it), sealed as secret values are, or ''
-- until it is given. IF NOT EXISTS: a test takes a store back to before
-- 0015 and migrates it again.
CREATE TABLE IF NOT EXISTS parties (
    name            TEXT NOT NULL PRIMARY KEY,
    url             TEXT NOT NULL,
    project         TEXT NOT NULL,
    credential_hash TEXT NOT NULL UNIQUE,
    credential      TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;
