package e2e

import (
	"slices"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store/pgtest"
)

// A party served by two replicas on one PostgreSQL aggregates FedAvg:
// the other parties call the follower, which hands the federation's
// requests to the leader and keeps the channel's pieces in the shared
// store, where the leader's shares read them. The leader is killed
// (kill -9) mid-run: the follower takes over the part and its running
// share, the killed replica comes back at its address (its shares'
// channel), and the run ends as if nothing happened.
func TestFederatedAveragingWithTheAggregatorOnReplicas(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Start(t).NewDatabase(t)
	party := []string{"--party", "carol"}
	rs := startReplicas(t, dsn, 2, replicaOptions{args: party})
	lead, term := rs.leader(t, 0)
	follower := rs.replicas[0]
	if follower == lead {
		follower = rs.replicas[1]
	}
	carol := &fedServer{api: follower.api}
	carol.name, carol.home, carol.url = "carol", follower.home, "http://"+follower.addr
	carol.env = append(slices.Clone(rs.env), "KILN_SERVER="+carol.url, "KILN_TOKEN="+rs.token)
	alice, bob := startFed(t, "alice", "127.0.0.1"), startFed(t, "bob", "127.0.0.2")
	federate(t, alice, bob, carol)
	run := fedavgRun(t, alice, 12, 20)
	part := apiv1.PartID(run.ID, "carol")
	waitMessage(t, carol, part, "update-2")
	lead.kill9()
	killed := time.Now()
	rs.leader(t, term)
	rs.start(t, lead, party...)
	log := checkFedAvg(t, run.ID, 12, 20, alice, bob, carol)
	for _, m := range log {
		if m.Name == "update-12" && !m.At.After(killed) {
			t.Errorf("the last round's update reached carol at %s, before her leader was killed at %s: the kill was not mid-run", m.At, killed)
		}
	}
	got, err := carol.api.GetRun(t.Context(), part)
	if err != nil {
		t.Fatal(err)
	}
	if n := nodeOf(t, got, "fedavg"); len(n.Attempts) != 1 {
		t.Errorf("carol's share made %d attempts; want 1: the new leader adopted it", len(n.Attempts))
	}
}
