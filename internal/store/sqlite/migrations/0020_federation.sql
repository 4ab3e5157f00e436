-- A federated run, and a party's part of one, record how they take part
-- (apiv1.FederationInfo as JSON).
CREATE TABLE run_federation (
	run_id TEXT PRIMARY KEY,
	info   TEXT NOT NULL
);

-- The shares of a federated task as the initiator last saw them (a JSON
-- list of apiv1.PartyShare), one row per node.
CREATE TABLE node_party_shares (
	run_id TEXT NOT NULL,
	node   TEXT NOT NULL,
	shares TEXT NOT NULL,
	PRIMARY KEY (run_id, node)
);

-- On a party, the initiator's latest order for each share of a part, and
-- the address the party picked for the share's attempt.
CREATE TABLE share_orders (
	run_id  TEXT NOT NULL,
	node    TEXT NOT NULL,
	attempt INTEGER NOT NULL,
	action  TEXT NOT NULL,
	peers   TEXT NOT NULL DEFAULT '',
	reason  TEXT NOT NULL DEFAULT '',
	address TEXT NOT NULL DEFAULT '',
	at      INTEGER NOT NULL,
	PRIMARY KEY (run_id, node)
);
