package e2e

import (
	"os/exec"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Two nodes of 10 CPUs each: larger than any fake node (8 CPUs), though
// the cluster has 32 in all.
const tooBigGang = `apiVersion: kiln.dev/v1alpha1
kind: TrainingRuntime
metadata: {name: torch-quick}
spec:
  mlPolicy: {numNodes: 2, torch: {}}
  gangPolicy: {scheduleTimeoutSeconds: 3}
---
apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: toobig}
spec:
  runtimeRef: {name: torch-quick}
  trainer:
    image: ghcr.io/example/ddp:1.0
    numProcPerNode: 1
    command: [torchrun, train.py]
    resourcesPerNode: {cpu: "10"}
`

func TestKubeGangTooBigTimesOutAndLeavesNothing(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	r := kiln(t, home, "run", writeFile(t, t.TempDir(), "toobig.yaml", tooBigGang))
	if r.code == 0 {
		t.Fatalf("a gang larger than every node succeeded:\n%s", r.stdout)
	}
	id := newestRun(t, home)
	run := describe(t, home, id)
	node := run.Status.Nodes[0]
	if run.Status.Phase != apiv1.PhaseFailed || node.Code != apiv1.CodeUnschedulable {
		t.Fatalf("want the run Failed with %s, got %s / %s: %s", apiv1.CodeUnschedulable, run.Status.Phase, node.Code, node.Message)
	}
	// The scheduler's own words reach the user.
	if !strings.Contains(node.Message, "Insufficient cpu") || !strings.Contains(node.Message, "3s") {
		t.Errorf("message does not carry the scheduler's reason and the timeout: %s", node.Message)
	}
	if left := c.leftovers(t, id); len(left) != 0 {
		t.Errorf("the failed gang left objects behind: %v", left)
	}
}

// A workflow whose first task runs until its pod is told to end (3s).
const slowThenFast = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: resume}
spec:
  image: busybox:1.36
  podTemplate:
    metadata:
      annotations: {kwok.kiln.dev/exit-code: "0", kwok.kiln.dev/delay: 3s}
  tasks:
  - {name: slow, command: [sleep, "3"]}
  - {name: after, dependsOn: [slow], command: [echo, done]}
`

func TestKubeKilledKilnResumesWithoutDuplicatePods(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	cmd := startKiln(t, home, "run", writeFile(t, t.TempDir(), "wf.yaml", slowThenFast))
	id := newestRun(t, home)
	waitPods(t, c, id, 1)
	killNine(t, cmd)
	r := kiln(t, home, "resume", string(id))
	if r.code != 0 {
		t.Fatalf("resume exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run := describe(t, home, id)
	if run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run is %s", run.Status.Phase)
	}
	for _, n := range run.Status.Nodes {
		if len(n.Attempts) != 1 {
			t.Errorf("task %s has %d attempts, want the adopted one only", n.Name, len(n.Attempts))
		}
	}
	pods := c.pods(t, id)
	if len(pods) != 2 {
		names := []string{}
		for _, p := range pods {
			names = append(names, p.Name)
		}
		t.Errorf("want exactly 2 pods (one per task), got %v", names)
	}
}

// A 4-node gang whose pods run until deleted.
const foreverGang = `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: forever}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    image: ghcr.io/example/ddp:1.0
    numNodes: 4
    numProcPerNode: 1
    command: [torchrun, train.py]
`

func TestKubeCancelRemovesEveryPod(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	cmd := startKiln(t, home, "run", writeFile(t, t.TempDir(), "forever.yaml", foreverGang))
	id := newestRun(t, home)
	waitPods(t, c, id, 4)
	if r := kiln(t, home, "cancel", string(id)); r.code != 0 {
		t.Fatalf("cancel exited %d: %s", r.code, r.stderr)
	}
	err := cmd.Wait()
	if ee := (*exec.ExitError)(nil); err == nil || !errorsAs(err, &ee) {
		t.Errorf("kiln run should exit non-zero after a cancel, got %v", err)
	}
	if run := describe(t, home, id); run.Status.Phase != apiv1.PhaseCancelled {
		t.Errorf("run is %s, want Cancelled", run.Status.Phase)
	}
	waitFor(t, "every object to go", func() bool { return len(c.leftovers(t, id)) == 0 })
}
