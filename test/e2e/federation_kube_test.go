package e2e

import (
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// A party whose server runs its shares on Kubernetes: its share is a pod
// of the test cluster, reserved and started with the others, given its
// channel (its own server's URL and the attempt's token) and adopted
// when the party's server is killed and comes back.
func TestAFederatedRunWithAPartyOnKubernetes(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	alice := startFed(t, "alice", "127.0.0.1")
	bob := &fedServer{addr: freeAddr(t, "127.0.0.2")}
	bob.name, bob.home = "bob", c.home(t)
	bob.start(t)
	federate(t, alice, bob)
	run := alice.submit(t, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: onkube}
spec:
  federation:
    roles: {guest: [alice], host: [bob]}
  tasks:
  - name: work
    roles: [guest, host]
    command: [sh, -c, 'sleep 6']
    resources: {cpu: 100m, memory: 16Mi}
    image: busybox:1.36           # bob's pod; alice runs the command as a process
    podTemplate:
      metadata:
        annotations: {kwok.kiln.dev/exit-code: "0", kwok.kiln.dev/delay: 6s}
`, nil)
	waitRunning(t, alice, run.ID)
	bob.kill9(t)
	bob.restart(t)
	done := alice.waitDone(t, run.ID, 2*time.Minute)
	if done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run: %s %s %s; shares %s", done.Status.Phase, done.Status.Code, done.Status.Message, shareLine(nodeOf(t, done, "work")))
	}
	part := bob.waitDone(t, apiv1.PartID(run.ID, "bob"), time.Minute)
	if n := nodeOf(t, part, "work"); part.Status.Phase != apiv1.PhaseSucceeded || len(n.Attempts) != 1 {
		t.Errorf("bob's part: %s, %d attempts; want Succeeded once", part.Status.Phase, len(n.Attempts))
	}
	pods := c.pods(t, part.ID)
	if len(pods) != 1 {
		t.Fatalf("bob's part made %d pods; want 1", len(pods))
	}
	env := map[string]string{}
	for _, e := range pods[0].Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if !strings.HasPrefix(env["KILN_FEDERATION_CHANNEL"], bob.url+"/api/v1/channel/"+string(part.ID)+"/work/1") || !strings.HasPrefix(env["KILN_FEDERATION_TOKEN"], apiv1.ChannelTokenPrefix) {
		t.Errorf("bob's pod has channel %q and token %.8q; want its own server's channel for attempt 1, and a token", env["KILN_FEDERATION_CHANNEL"], env["KILN_FEDERATION_TOKEN"])
	}
}
