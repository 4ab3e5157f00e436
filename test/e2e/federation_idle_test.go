package e2e

import (
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// An initiator that dies for good leaves no part stuck: bob ends his
// part once alice was silent past his own --party-idle-timeout, with
// KLN-7023, its running share stopped.
func TestAPartyEndsItsPartWhenTheInitiatorNeverReturns(t *testing.T) {
	t.Parallel()
	alice, carol := startFed(t, "alice", "127.0.0.1"), startFed(t, "carol", "127.0.0.3")
	bob := startFedWith(t, "bob", "127.0.0.2", "--party-idle-timeout", "20s")
	federate(t, alice, bob, carol)
	book := ledger(t)
	run := alice.submit(t, sleepers("60s", ""), map[string]string{"ledger": book, "seconds": "600"})
	waitRunning(t, alice, run.ID)
	alice.kill9(t)
	killed := time.Now()
	part := bob.waitDone(t, apiv1.PartID(run.ID, "bob"), 2*time.Minute)
	n := nodeOf(t, part, "work")
	if part.Status.Phase != apiv1.PhaseFailed || n.Code != apiv1.CodePartIdle || !strings.Contains(n.Message, "--party-idle-timeout") {
		t.Fatalf("bob's part: %s; task %s %s %s; want Failed with %s naming the idle timeout", part.Status.Phase, n.Phase, n.Code, n.Message, apiv1.CodePartIdle)
	}
	if len(n.Attempts) != 1 || n.Attempts[0].Phase != apiv1.PhaseFailed || n.Attempts[0].Code != apiv1.CodePartIdle || n.Attempts[0].FinishedAt == nil {
		t.Errorf("bob's share's attempt: %+v; want it stopped with %s", n.Attempts, apiv1.CodePartIdle)
	}
	if waited := time.Since(killed); waited < 20*time.Second {
		t.Errorf("bob ended his part %s after alice died, before his idle timeout of 20s", waited)
	}
	// carol keeps the default timeout, 10 minutes: her part still waits.
	if p := carol.run(t, apiv1.PartID(run.ID, "carol")); p.Status.Phase.Done() {
		t.Errorf("carol's part ended (%s) though her idle timeout is 10m", p.Status.Phase)
	}
}

// An initiator busy with a long task of its own calls its parties all
// the same: bob's part, idle between its shares for longer than bob's
// idle timeout, is not ended, and the run succeeds.
func TestAnInitiatorsHeartbeatKeepsItsPartsAliveBetweenShares(t *testing.T) {
	t.Parallel()
	alice := startFed(t, "alice", "127.0.0.1")
	bob := startFedWith(t, "bob", "127.0.0.2", "--party-idle-timeout", "20s")
	federate(t, alice, bob)
	run := alice.submit(t, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: heartbeat}
spec:
  federation:
    roles: {guest: [alice], host: [bob]}
  tasks:
  - {name: first, roles: [guest, host], command: ["true"], resources: {cpu: 100m}}
  - {name: long, roles: [guest], dependsOn: [first], command: [sleep, "35"], resources: {cpu: 100m}}
  - {name: last, roles: [guest, host], dependsOn: [long], command: ["true"], resources: {cpu: 100m}}
`, nil)
	done := alice.waitDone(t, run.ID, 3*time.Minute)
	if done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run: %s %s %s", done.Status.Phase, done.Status.Code, done.Status.Message)
	}
	part := bob.waitDone(t, apiv1.PartID(run.ID, "bob"), time.Minute)
	if part.Status.Phase != apiv1.PhaseSucceeded {
		t.Errorf("bob's part: %s %s", part.Status.Phase, part.Status.Message)
	}
}
