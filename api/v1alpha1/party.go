package v1alpha1

import "time"

// PartyHeader names, on every request one party's server sends another,
// the party that sends it; on every answer of the federation routes, the
// party that answers. A request's header must name the party its
// credential was issued to.
const PartyHeader = "Kiln-Party"

// CredentialPrefix starts every credential a server issues to a party,
// so that one is told apart from an API token ("kln_") at a glance.
const CredentialPrefix = "kpc_"

// Party is another kiln server this one federates with, as listed. No
// credential is ever listed: only whether the one it issued is known.
type Party struct {
	// Name is the party's name, as it calls itself (kiln serve --party).
	Name string `json:"name"`
	// URL is where its server is reached.
	URL string `json:"url"`
	// Project is the project on this server that the party's parts of
	// federated runs go into (their secrets, quotas and tokens).
	Project string `json:"project"`
	// Credential is "set" once the credential the party issued to this
	// server is known, "missing" until it is given (kiln party add
	// --credential): without it this server cannot call the party.
	Credential string `json:"credential"`
	// Policy is what the party's parts may do here; none: nothing.
	Policy *PartyPolicy `json:"policy,omitempty"`
	// Pin is the certificate its https server must present
	// ("sha256:<hex>"), if pinned.
	Pin       string    `json:"pin,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// PartyPolicy is what the parts of federated runs that a party initiates
// may do at this server, kept and enforced here whatever the initiator's
// workflow says (docs/federation.md, "Each party in control"). A party
// registered without one may run nothing here.
type PartyPolicy struct {
	// Commands are the command lines a share may run: each is a prefix,
	// word by word, of the share's command and args once its params are
	// put in ("/usr/bin/python3 /srv/fl/fedavg.py"). "*" allows any.
	Commands []string `json:"commands,omitempty"`
	// Secrets are the secrets of the party's project a share may read;
	// none unless named.
	Secrets []string `json:"secrets,omitempty"`
	// Outputs are the output parameters that may leave the party, as
	// TASK.PARAM, to the roles a workflow's to: names; "*" allows any.
	Outputs []string `json:"outputs,omitempty"`
	// Images are the images a share may name (on Kubernetes); "*" allows
	// any. A policy whose Commands hold "*" allows any image too.
	Images []string `json:"images,omitempty"`
	// MaxResources bounds what one share may ask in all (every node of a
	// training job together); unset fields are not bounded.
	MaxResources *Resources `json:"maxResources,omitempty"`
}

// Values of Party.Credential.
const (
	CredentialSet     = "set"
	CredentialMissing = "missing"
)

// PartyRequest registers a party, or updates one: sent again, it changes
// only what it sets, and issues no new credential unless Rotate is set.
type PartyRequest struct {
	// Name is the party's name (a DNS-1123 label).
	Name string `json:"name"`
	// URL is where its server is reached, http:// or https://.
	URL string `json:"url"`
	// Credential is the credential the party issued to this server (its
	// own kiln party add printed it); empty keeps the one known, if any.
	Credential string `json:"credential,omitempty"`
	// Project is the project its parts go into; empty: "default" for a
	// new party, the one it had for a known one.
	Project string `json:"project,omitempty"`
	// Rotate issues the party a new credential; the old one is refused
	// from then on.
	Rotate bool `json:"rotate,omitempty"`
	// NoCheck registers the party without calling its server first.
	NoCheck bool `json:"noCheck,omitempty"`
	// Policy replaces what the party's parts may do here; nil keeps the
	// one it has (none, for a new party: it may run nothing).
	Policy *PartyPolicy `json:"policy,omitempty"`
	// Pin pins the certificate the party's https server must present:
	// sha256:<hex> of its DER bytes, which its kiln serve --tls-cert
	// prints; empty keeps the one it has. Without one, the system's roots
	// decide.
	Pin string `json:"pin,omitempty"`
}

// PartyAdded is what registering a party did.
type PartyAdded struct {
	Party Party `json:"party"`
	// Created is set when the party was not registered before.
	Created bool `json:"created,omitempty"`
	// Credential is the credential this server issued to the party, when
	// it issued one now (a new party, or Rotate). It is shown this once:
	// the server keeps only its hash.
	Credential string `json:"credential,omitempty"`
	// Warnings say what could not be checked.
	Warnings []string `json:"warnings,omitempty"`
	// Self and SelfURL are the registering server's own party and the URL
	// it is advertised at (empty without a party identity): what the
	// party registers in return.
	Self    string `json:"self,omitempty"`
	SelfURL string `json:"selfURL,omitempty"`
}

// PartyHello is a party server's answer to GET /api/v1/federation/party:
// who it is, to a caller whose credential it accepts.
type PartyHello struct {
	Party string `json:"party"`
}
