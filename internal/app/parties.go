package app

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/federation"
	"kiln.dev/kiln/internal/store"
)

// partyCheckTimeout bounds the call AddParty makes to a party's server.
const partyCheckTimeout = 10 * time.Second

// AddParty registers a party or updates it (see apiv1.PartyRequest): a
// new party, or one rotated, is issued a credential, returned this once
// and stored as its hash. Unless req.NoCheck, the party's server is
// called first, and nothing is stored if it is not reached, is another
// party, or refuses the credential given.
func (a *App) AddParty(ctx context.Context, req apiv1.PartyRequest) (*apiv1.PartyAdded, error) {
	if err := a.checkPartyRequest(req); err != nil {
		return nil, err
	}
	old, err := a.Store.GetParty(ctx, req.Name)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	p, added, err := mergeParty(old, req)
	if err != nil {
		return nil, err
	}
	if !req.NoCheck {
		if added.Warnings, err = a.checkParty(ctx, p, req.Credential != ""); err != nil {
			return nil, err
		}
	}
	if err := a.Store.PutParty(ctx, p); err != nil {
		return nil, err
	}
	added.Party = partyView(p)
	added.Self, added.SelfURL = a.Party, a.Advertise
	return added, nil
}

// checkPartyRequest checks what a request says on its own.
func (a *App) checkPartyRequest(req apiv1.PartyRequest) error {
	object := "party/" + req.Name
	switch {
	case len(validation.IsDNS1123Label(req.Name)) > 0:
		return &apiv1.Error{Code: apiv1.CodeInvalidName, Object: object, Field: "name", Message: fmt.Sprintf("party name %q is not a DNS-1123 label", req.Name)}
	case req.Name == a.Party:
		return &apiv1.Error{Code: apiv1.CodePartySelf, Object: object, Message: fmt.Sprintf("%s is this server's own party (kiln serve --party)", req.Name)}
	case req.Credential != "" && !strings.HasPrefix(req.Credential, apiv1.CredentialPrefix):
		return &apiv1.Error{
			Code: apiv1.CodePartyCredential, Object: object, Field: "credential",
			Message: fmt.Sprintf("the credential given for party %s is not a party credential: those start with %s", req.Name, apiv1.CredentialPrefix),
			Hint:    fmt.Sprintf("give the credential that kiln party add printed on %s's server, not an API token", req.Name),
		}
	}
	if err := federation.CheckPolicyValid(req.Name, req.Policy); err != nil {
		return err
	}
	if req.Pin != "" && !sha256Form().MatchString(req.Pin) {
		return &apiv1.Error{
			Code: apiv1.CodePartyURL, Object: object, Field: "pin",
			Message: fmt.Sprintf("%q is not a certificate pin: sha256:<64 hex digits>", req.Pin),
			Hint:    "kiln serve --tls-cert prints its certificate's pin; openssl x509 -in CERT -outform DER | sha256sum computes it",
		}
	}
	if req.URL == "" {
		return nil // an update may keep the URL known; mergeParty checks a new party has one
	}
	return checkPartyURL(req.Name, req.URL)
}

// checkPartyURL checks that raw is an http(s) URL with a host.
func checkPartyURL(name, raw string) error {
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return nil
	}
	return &apiv1.Error{
		Code: apiv1.CodePartyURL, Object: "party/" + name, Field: "url",
		Message: fmt.Sprintf("%q is not an http:// or https:// URL with a host", raw),
	}
}

// mergeParty is the party req makes of old (nil: none), and what it did:
// a new party, or one rotated, is issued a new credential.
func mergeParty(old *store.Party, req apiv1.PartyRequest) (store.Party, *apiv1.PartyAdded, error) {
	now := time.Now().UTC()
	p := store.Party{Name: req.Name, URL: req.URL, Project: cmp.Or(req.Project, "default"), Credential: req.Credential, Policy: req.Policy, Pin: req.Pin, CreatedAt: now, UpdatedAt: now}
	if old != nil {
		p.URL, p.Project = cmp.Or(req.URL, old.URL), cmp.Or(req.Project, old.Project)
		p.Credential, p.CredentialHash, p.CreatedAt = cmp.Or(req.Credential, old.Credential), old.CredentialHash, old.CreatedAt
		if p.Policy == nil {
			p.Policy = old.Policy
		}
		p.Pin = cmp.Or(req.Pin, old.Pin)
	}
	if p.URL == "" {
		return p, nil, &apiv1.Error{
			Code: apiv1.CodePartyURL, Object: "party/" + req.Name, Field: "url",
			Message: fmt.Sprintf("party %s is not registered yet, and needs the URL its kiln server is reached at", req.Name),
			Hint:    fmt.Sprintf("kiln party add %s --url http://HOST:PORT", req.Name),
		}
	}
	added := &apiv1.PartyAdded{Created: old == nil}
	if old == nil || req.Rotate {
		raw, err := newCredential()
		if err != nil {
			return p, nil, err
		}
		added.Credential, p.CredentialHash = raw, store.HashCredential(raw)
	}
	return p, added, nil
}

// newCredential is a fresh party credential: the prefix and 32 random bytes.
func newCredential() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return apiv1.CredentialPrefix + hex.EncodeToString(b), nil
}

// Parties lists the registered parties, never their credentials.
func (a *App) Parties(ctx context.Context) ([]apiv1.Party, error) {
	ps, err := a.Store.ListParties(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]apiv1.Party, len(ps))
	for i, p := range ps {
		out[i] = partyView(p)
	}
	return out, nil
}

// RemoveParty forgets a party; KLN-7003 if none has that name.
func (a *App) RemoveParty(ctx context.Context, name string) error {
	err := a.Store.DeleteParty(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return notRegistered(name)
	}
	return err
}

func notRegistered(name string) error {
	return &apiv1.Error{Code: apiv1.CodePartyNotFound, Object: "party/" + name, Message: fmt.Sprintf("no party %s is registered", name)}
}

// partyView is p as listed: whether its credential is known, not what it is.
func partyView(p store.Party) apiv1.Party {
	cred := apiv1.CredentialMissing
	if p.Credential != "" {
		cred = apiv1.CredentialSet
	}
	return apiv1.Party{Name: p.Name, URL: p.URL, Project: p.Project, Credential: cred, Policy: p.Policy, Pin: p.Pin, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}
