package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// testFederation checks that a run's federation, its nodes' party shares
// and a part's share orders read back as written.
func testFederation(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := NewRun("part", "me")
	p.Run.Federation = &apiv1.FederationInfo{
		Initiator: "alice", Party: "bob", Run: "fed", Roles: map[string][]string{"guest": {"alice"}, "host": {"bob"}}, Part: true,
		Shares: []apiv1.ShareRef{{Task: "a", Party: "bob", Role: "host", Name: "a"}},
	}
	mustCreate(t, s, p)
	mustCreate(t, s, NewRun("plain", "me"))
	got, err := s.GetRun(ctx, "part")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p.Run.Federation, got.Federation); diff != "" {
		t.Errorf("federation read back (-want +got):\n%s", diff)
	}
	list, err := s.ListRuns(ctx, store.ListRunsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		if (r.ID == "part") != (r.Federation != nil) {
			t.Errorf("listed run %s has federation %+v", r.ID, r.Federation)
		}
	}
	o := store.ShareOrderRow{
		ShareOrder: apiv1.ShareOrder{Attempt: 2, Action: apiv1.OrderStart, Peers: []apiv1.Peer{{Party: "alice", Role: "guest", Task: "a", Address: "127.0.0.1:4000"}}},
		Address:    "127.0.0.2:4001", At: t0.Add(time.Second), Inputs: map[string]string{"score.auc": "0.93"},
	}
	if err := s.PutShareOrder(ctx, "part", "a", store.ShareOrderRow{ShareOrder: apiv1.ShareOrder{Attempt: 1, Action: apiv1.OrderReserve}, At: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutShareOrder(ctx, "part", "a", o); err != nil {
		t.Fatal(err)
	}
	orders, err := s.ShareOrders(ctx, "part")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]store.ShareOrderRow{"a": o}, orders); diff != "" {
		t.Errorf("orders read back (-want +got):\n%s", diff)
	}
	if err := s.PutShareOrder(ctx, "part", "nope", o); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("order for an unknown node: got %v, want ErrNotFound", err)
	}
	if err := s.PutShareOrder(ctx, "none", "a", o); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("order for an unknown run: got %v, want ErrNotFound", err)
	}
}
