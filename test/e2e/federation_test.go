package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// threeParties starts alice (guest, the initiator), bob (host) and carol
// (arbiter), each on its own loopback address, registered with each other,
// with alice's and bob's private numbers in their own secrets.
func threeParties(t *testing.T) (alice, bob, carol *fedServer) {
	t.Helper()
	alice, bob, carol = startFed(t, "alice", "127.0.0.1"), startFed(t, "bob", "127.0.0.2"), startFed(t, "carol", "127.0.0.3")
	federate(t, alice, bob, carol)
	alice.setPrivateValue(t, "1234567")
	bob.setPrivateValue(t, "7654321")
	return alice, bob, carol
}

func secureSum(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../examples/federated/secure-sum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFederatedSecureSumAcrossThreeServers(t *testing.T) {
	t.Parallel()
	alice, bob, carol := threeParties(t)
	run := alice.submit(t, secureSum(t), secureSumParams(t))
	done := alice.waitDone(t, run.ID, 2*time.Minute)
	n := nodeOf(t, done, "secure-sum")
	if done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("federated run %s: %s %s %s; shares %s", run.ID, done.Status.Phase, done.Status.Code, done.Status.Message, shareLine(n))
	}
	if len(n.Parties) != 3 || n.Kind != apiv1.NodeKindFederated {
		t.Errorf("task secure-sum: kind %s, shares %s; want federated with three shares", n.Kind, shareLine(n))
	}
	for _, p := range n.Parties {
		if p.State != apiv1.ShareSucceeded || p.Attempt != 1 || p.Address == "" {
			t.Errorf("share of %s: %+v; want Succeeded, attempt 1, with its address", p.Party, p)
		}
	}
	// Each party ran its own share once, under its own engine, and
	// learnt the total; no raw value left its party.
	for _, s := range []*fedServer{alice, bob, carol} {
		part := s.waitDone(t, apiv1.PartID(run.ID, s.name), 30*time.Second)
		pn := nodeOf(t, part, "secure-sum")
		if part.Status.Phase != apiv1.PhaseSucceeded || len(pn.Attempts) != 1 || pn.Outputs["total"] != "8888888" {
			t.Errorf("%s's part: %s, %d attempts, outputs %v; want Succeeded once with total 8888888", s.name, part.Status.Phase, len(pn.Attempts), pn.Outputs)
		}
		if part.Federation == nil || !part.Federation.Part || part.Federation.Initiator != "alice" {
			t.Errorf("%s's part records federation %+v; want a part initiated by alice", s.name, part.Federation)
		}
		log := s.logs(t, part.ID, "secure-sum")
		for _, other := range []struct{ party, value string }{{"alice", "1234567"}, {"bob", "7654321"}} {
			if other.party != s.name && strings.Contains(log, other.value) {
				t.Errorf("%s's log holds %s's private value:\n%s", s.name, other.party, log)
			}
		}
	}
	checkChannelLogs(t, run.ID, alice, bob, carol)
	// The initiator's own API holds no party's raw value either.
	if whole := alice.kiln(t, "describe", "run", string(run.ID), "-o", "json"); strings.Contains(whole.stdout, "7654321") {
		t.Errorf("the initiator's record of the run holds bob's private value")
	}
	// At a party, the federated run's ID leads to the party's part.
	if r := bob.kiln(t, "logs", string(run.ID), "secure-sum"); r.code == 0 || !strings.Contains(r.stderr, string(apiv1.PartID(run.ID, "bob"))) {
		t.Errorf("kiln logs of the federated run at bob = exit %d, %s; want a pointer to bob's part", r.code, r.stderr)
	}
	r := alice.kiln(t, "describe", "run", string(run.ID))
	if !strings.Contains(r.stdout, "carol as arbiter") {
		t.Errorf("describe of the federated run shows no share lanes:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "party carol (arbiter): Succeeded") {
		t.Errorf("the federated run's events tell nothing of the shares:\n%s", r.stdout)
	}
}

// A federated training job: each party runs its own gang (a 2-node
// PyTorch DDP job over gloo), admitted whole in its own pool, all parties'
// gangs reserved before any starts.
func TestFederatedGangRunsWholeAtEveryParty(t *testing.T) {
	t.Parallel()
	alice, bob, _ := threeParties(t)
	ddp, err := filepath.Abs("../../examples/training/ddp.py")
	if err != nil {
		t.Fatal(err)
	}
	run := alice.submit(t, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: fedtrain}
spec:
  federation:
    roles: {guest: [alice], host: [bob]}
  tasks:
  - name: ddp
    roles: [guest, host]
    train:
      runtime: torch-distributed
      command: [/usr/bin/python3, `+ddp+`]
      numNodes: 2
      numProcPerNode: 1
      resourcesPerNode: {cpu: 500m}
`, nil)
	done := alice.waitDone(t, run.ID, 3*time.Minute)
	if done.Status.Phase != apiv1.PhaseSucceeded {
		for _, s := range []*fedServer{alice, bob} { // what each share's ranks said, for the failure's cause
			s.waitDone(t, apiv1.PartID(run.ID, s.name), 30*time.Second)
			t.Logf("%s's share logs:\n%s", s.name, s.logs(t, apiv1.PartID(run.ID, s.name), "ddp"))
		}
		t.Fatalf("run %s: %s %s; shares %s", run.ID, done.Status.Phase, done.Status.Message, shareLine(nodeOf(t, done, "ddp")))
	}
	for _, s := range []*fedServer{alice, bob} {
		part := s.waitDone(t, apiv1.PartID(run.ID, s.name), 30*time.Second)
		pn := nodeOf(t, part, "ddp")
		if pn.Kind != apiv1.NodeKindTrain || len(pn.Attempts) != 1 || len(pn.Replicas) == 0 || pn.Replicas[0].Succeeded != 2 {
			t.Errorf("%s's share: kind %s, %d attempts, replicas %+v; want one train attempt of 2 nodes that succeeded", s.name, pn.Kind, len(pn.Attempts), pn.Replicas)
		}
		if log := s.logs(t, part.ID, "ddp"); !strings.Contains(log, "rank 1/2") || !strings.Contains(log, "identical_weights=True") {
			t.Errorf("%s's gang log lacks its second rank's converged weights:\n%s", s.name, log)
		}
	}
}

// checkChannelLogs checks that every message of the secure sum is logged
// at both ends, with the same size and digest, and was taken.
func checkChannelLogs(t *testing.T, run apiv1.RunID, servers ...*fedServer) {
	t.Helper()
	type end struct{ from, to, name string }
	sent, received := map[end]apiv1.ChannelMessage{}, map[end]apiv1.ChannelMessage{}
	for _, s := range servers {
		log, err := s.api.Messages(t.Context(), apiv1.PartID(run, s.name))
		if err != nil {
			t.Fatalf("%s: messages: %v", s.name, err)
		}
		for _, m := range log {
			if m.Direction == apiv1.ChannelSent {
				sent[end{s.name, m.Party, m.Name}] = m
			} else {
				received[end{m.Party, s.name, m.Name}] = m
			}
		}
	}
	want := []end{{"alice", "bob", "mask"}, {"alice", "carol", "share"}, {"bob", "carol", "share"}, {"carol", "alice", "total"}, {"carol", "bob", "total"}}
	if len(sent) != len(want) || len(received) != len(want) {
		t.Errorf("logged %d messages sent and %d received; want %d each: %v / %v", len(sent), len(received), len(want), sent, received)
	}
	for _, e := range want {
		s, r := sent[e], received[e]
		if s.Digest == "" || s.Digest != r.Digest || s.Size != r.Size || s.Size == 0 || r.Taken == nil {
			t.Errorf("message %s from %s to %s: sent %+v, received %+v; want both ends logged alike, and taken", e.name, e.from, e.to, s, r)
		}
	}
}
