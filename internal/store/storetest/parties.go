package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

func testParties(t *testing.T, s store.Store) {
	ctx := t.Context()
	bob := store.Party{
		Name: "bob", URL: "http://bob:8420", Project: "default", CredentialHash: store.HashCredential("kpc_to_bob"),
		CreatedAt: t0, UpdatedAt: t0,
	}
	carol := store.Party{
		Name: "carol", URL: "https://carol", Project: "fed", CredentialHash: store.HashCredential("kpc_to_carol"),
		Credential: "kpc_from_carol", CreatedAt: t0, UpdatedAt: t0,
		Policy: &apiv1.PartyPolicy{Commands: []string{"/usr/bin/python3 /srv/fl/fedavg.py"}, Secrets: []string{"data-key"}, MaxResources: &apiv1.Resources{CPU: "2"}, Images: []string{"*"}},
		Pin:    "sha256:" + strings.Repeat("ab", 32),
	}
	for _, p := range []store.Party{carol, bob} {
		if err := s.PutParty(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.GetParty(ctx, "bob"); err != nil || !cmp.Equal(*got, bob) {
		t.Errorf("GetParty(bob) = %+v, %v; want %+v", got, err, bob)
	}
	if got, err := s.PartyByCredential(ctx, store.HashCredential("kpc_to_carol")); err != nil || !cmp.Equal(*got, carol) {
		t.Errorf("PartyByCredential(carol's) = %+v, %v; want carol with the credential she issued, in clear", got, err)
	}
	if list, err := s.ListParties(ctx); err != nil || !cmp.Equal(list, []store.Party{bob, carol}) {
		t.Errorf("ListParties = %+v, %v; want bob, carol", list, err)
	}
	// An update keeps when the party was created.
	later := t0.Add(time.Hour)
	bob2 := bob
	bob2.URL, bob2.Credential, bob2.UpdatedAt = "http://bob2:8420", "kpc_from_bob", later
	bob2.CredentialHash = store.HashCredential("kpc_to_bob_rotated")
	if err := s.PutParty(ctx, bob2); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetParty(ctx, "bob"); err != nil || !cmp.Equal(*got, bob2) {
		t.Errorf("GetParty(bob) after an update = %+v, %v; want %+v", got, err, bob2)
	}
	if _, err := s.PartyByCredential(ctx, store.HashCredential("kpc_to_bob")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the credential a rotation replaced = %v, want ErrNotFound", err)
	}
	taken := store.Party{Name: "dave", URL: "http://dave", Project: "default", CredentialHash: carol.CredentialHash, UpdatedAt: t0}
	if err := s.PutParty(ctx, taken); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a party with another's credential hash = %v, want ErrConflict", err)
	}
	testPartyDelete(t, s)
}

func testPartyDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.DeleteParty(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetParty(ctx, "carol"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetParty after delete = %v, want ErrNotFound", err)
	}
	if _, err := s.PartyByCredential(ctx, store.HashCredential("kpc_to_carol")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted party's credential = %v, want ErrNotFound", err)
	}
	if err := s.DeleteParty(ctx, "carol"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting twice = %v, want ErrNotFound", err)
	}
	if list, err := s.ListParties(ctx); err != nil || len(list) != 1 || list[0].Name != "bob" {
		t.Errorf("ListParties after delete = %+v, %v; want bob alone", list, err)
	}
}
