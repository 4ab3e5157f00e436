package e2e

import (
	"crypto/rand"
	"fmt"
	"maps"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// netns is a network namespace joined to this one by a veth pair, for a
// party on a network of its own that a test can cut off and join again.
type netns struct {
	name, inner  string // the namespace and its end of the pair
	hostIP, nsIP string
}

// newNetns makes one, or skips the test where network namespaces cannot
// be made (no privileges, no ip).
func newNetns(t *testing.T) *netns {
	t.Helper()
	n, _ := rand.Int(rand.Reader, big.NewInt(1<<20))
	id := fmt.Sprintf("%05x", n.Int64())
	subnet := fmt.Sprintf("10.%d.%d", 200+n.Int64()%50, n.Int64()/50%256)
	ns := &netns{name: "kiln-" + id, inner: "kvb" + id, hostIP: subnet + ".1", nsIP: subnet + ".2"}
	outer := "kva" + id
	steps := [][]string{
		{"ip", "netns", "add", ns.name},
		{"ip", "link", "add", outer, "type", "veth", "peer", "name", ns.inner},
		{"ip", "link", "set", ns.inner, "netns", ns.name},
		{"ip", "addr", "add", ns.hostIP + "/30", "dev", outer},
		{"ip", "link", "set", outer, "up"},
		{"ip", "netns", "exec", ns.name, "ip", "addr", "add", ns.nsIP + "/30", "dev", ns.inner},
		{"ip", "netns", "exec", ns.name, "ip", "link", "set", ns.inner, "up"},
		{"ip", "netns", "exec", ns.name, "ip", "link", "set", "lo", "up"},
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns.name).Run() })
	for _, step := range steps {
		if out, err := exec.Command(step[0], step[1:]...).CombinedOutput(); err != nil {
			if os.Getenv("KILN_REQUIRE_NETNS") != "" {
				t.Fatalf("%s: %v: %s", strings.Join(step, " "), err, out)
			}
			t.Skipf("network namespaces are not available here (%s: %v: %s)", strings.Join(step, " "), err, out)
		}
	}
	return ns
}

// cut takes the namespace off the network (its end of the pair down), or
// joins it again.
func (ns *netns) cut(t *testing.T, off bool) {
	t.Helper()
	state := "up"
	if off {
		state = "down"
	}
	if out, err := exec.Command("ip", "netns", "exec", ns.name, "ip", "link", "set", ns.inner, state).CombinedOutput(); err != nil {
		t.Fatalf("setting %s %s: %v: %s", ns.inner, state, err, out)
	}
}

// bob runs in a network namespace of his own, alice and carol outside
// it: the secure sum crosses it, and a partition of bob's network for a
// few seconds heals without any task running twice.
func TestFederatedRunAcrossNetworkNamespacesSurvivesAPartition(t *testing.T) {
	t.Parallel()
	ns := newNetns(t)
	alice := startFed(t, "alice", ns.hostIP)
	carol := startFed(t, "carol", ns.hostIP)
	bob := startFedAt(t, "bob", ns.nsIP+":18420", []string{"ip", "netns", "exec", ns.name})
	federate(t, alice, bob, carol)
	alice.setPrivateValue(t, "1234567")
	bob.setPrivateValue(t, "7654321")

	run := alice.submit(t, secureSum(t), secureSumParams(t))
	if done := alice.waitDone(t, run.ID, 2*time.Minute); done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("secure sum across namespaces: %s %s; shares %s", done.Status.Phase, done.Status.Message, shareLine(nodeOf(t, done, "secure-sum")))
	}
	if log := carol.logs(t, apiv1.PartID(run.ID, "carol"), "secure-sum"); !strings.Contains(log, "total=8888888") {
		t.Errorf("carol's share printed %q; want total=8888888", log)
	}

	book := ledger(t)
	run = alice.submit(t, sleepers("30s", ""), map[string]string{"ledger": book, "seconds": "12"})
	waitRunning(t, alice, run.ID)
	ns.cut(t, true)
	waitShareState(t, alice, run.ID, "bob", apiv1.ShareUnreachable)
	ns.cut(t, false)
	done := alice.waitDone(t, run.ID, 2*time.Minute)
	if done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s after the partition healed: %s %s; shares %s", run.ID, done.Status.Phase, done.Status.Message, shareLine(nodeOf(t, done, "work")))
	}
	if got, want := ledgerLines(t, book), []string{"alice/1", "bob/1", "carol/1"}; !slices.Equal(got, want) {
		t.Errorf("shares started %v; want each party's once: %v", got, want)
	}
}

// bob sends carol 24 blocks of 1 MiB and one of 8 MiB through the
// channel from a network namespace of his own; his network is cut in the
// middle and joined again: the transfer resumes where it stopped, every
// block arrives once and whole, and nothing runs twice.
func TestAChannelTransferResumesAfterAPartition(t *testing.T) {
	t.Parallel()
	ns := newNetns(t)
	alice := startFed(t, "alice", ns.hostIP)
	carol := startFed(t, "carol", ns.hostIP)
	bob := startFedAt(t, "bob", ns.nsIP+":18421", []string{"ip", "netns", "exec", ns.name})
	federate(t, alice, bob, carol)
	script, err := filepath.Abs("testdata/transfer.py")
	if err != nil {
		t.Fatal(err)
	}
	run := alice.submit(t, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: transfer}
spec:
  params: [{name: script}, {name: sdk}]
  federation:
    roles: {sender: [bob], receiver: [carol]}
    partyTimeout: 2m
  tasks:
  - name: move
    roles: [sender, receiver]
    command: [python3, "{{params.script}}"]
    env: [{name: PYTHONPATH, value: "{{params.sdk}}"}]
    resources: {cpu: 200m, memory: 256Mi}
    outputs: {parameters: [{name: mib}]}
`, map[string]string{"script": script, "sdk": sdkPath(t)})
	part := apiv1.PartID(run.ID, "carol")
	waitMessage(t, carol, part, "block-3")
	ns.cut(t, true)
	cut := time.Now()
	waitShareState(t, alice, run.ID, "bob", apiv1.ShareUnreachable)
	ns.cut(t, false)
	done := alice.waitDone(t, run.ID, 3*time.Minute)
	if done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s after the partition healed: %s %s; shares %s", run.ID, done.Status.Phase, done.Status.Message, shareLine(nodeOf(t, done, "move")))
	}
	got := carol.waitDone(t, part, time.Minute)
	if n := nodeOf(t, got, "move"); n.Outputs["mib"] != "32" || len(n.Attempts) != 1 {
		t.Errorf("carol's share: output mib %q after %d attempts; want 32 in one", n.Outputs["mib"], len(n.Attempts))
	}
	log, err := carol.api.Messages(t.Context(), part)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, m := range log {
		seen[m.Name]++
		if m.Name == "big" && (m.Chunks != 16 || m.Size != 8<<20 || !m.At.After(cut)) {
			t.Errorf("the big message was logged as %d bytes in %d pieces at %s; want 8 MiB in 16, after the cut at %s", m.Size, m.Chunks, m.At, cut)
		}
	}
	if len(seen) != 25 || slices.ContainsFunc(slices.Collect(maps.Values(seen)), func(n int) bool { return n != 1 }) {
		t.Errorf("carol logged %v; want each of the 25 messages once", seen)
	}
}
