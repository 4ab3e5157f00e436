package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Parties keeps the other kiln servers this one federates with. Each
// pair of parties trusts each other with two credentials: the one this
// server issued to the party (kept as its hash alone: it checks the
// party's calls) and the one the party issued to this server (kept
// sealed, as secret values are: it is sent with this server's calls).
type Parties interface {
	// PutParty creates or replaces the party of p.Name. A replaced party
	// keeps its CreatedAt; p.UpdatedAt is when it is stored (and, for a
	// new one, created). ErrConflict if another party has p.CredentialHash.
	PutParty(ctx context.Context, p Party) error
	// GetParty returns the party named name, or ErrNotFound.
	GetParty(ctx context.Context, name string) (*Party, error)
	// ListParties returns every party, by name.
	ListParties(ctx context.Context) ([]Party, error)
	// DeleteParty removes a party, or returns ErrNotFound. Its credential
	// is refused from then on.
	DeleteParty(ctx context.Context, name string) error
	// PartyByCredential returns the party whose issued credential has
	// hash (see HashCredential), or ErrNotFound.
	PartyByCredential(ctx context.Context, hash string) (*Party, error)
}

// Party is a registered party as stored.
type Party struct {
	// Name is the party's name; URL where its server is reached.
	Name string
	URL  string
	// Project receives the party's parts of federated runs.
	Project string
	// CredentialHash is the SHA-256 of the credential this server issued
	// to the party, in hex (HashCredential).
	CredentialHash string
	// Credential is the credential the party issued to this server, in
	// clear once read; "" until it is given.
	Credential string
	// Policy is what the party's parts may do here; nil: nothing.
	Policy *apiv1.PartyPolicy
	// Pin, if set, is the certificate the party's https server must
	// present ("sha256:<hex>").
	Pin                  string
	CreatedAt, UpdatedAt time.Time
}

// HashCredential is how issued party credentials are kept: their SHA-256,
// in hex.
func HashCredential(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])
}
