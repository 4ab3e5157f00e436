package e2e

import (
	"fmt"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// misnamedGang is a 2-node TrainJob whose runtime asks for coscheduling's
// PodGroup with a 15s schedule timeout.
const misnamedGang = `apiVersion: kiln.dev/v1alpha1
kind: TrainingRuntime
metadata: {name: gang}
spec:
  mlPolicy: {numNodes: 2, plain: {}}
  gangPolicy: {scheduler: coscheduling, scheduleTimeoutSeconds: 15}
---
apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: stranded}
spec:
  runtimeRef: {name: gang}
  trainer:
    image: busybox:1.36
    command: [sh, -c, "echo never"]
    resourcesPerNode: {cpu: 100m, memory: 16Mi}
`

// TestKubeGangOfAMisnamedSchedulerIsQueuedThenTimesOut: the backend names
// a gang scheduler that does not run, so no scheduler ever writes a
// condition on the pods. The job shows Queued with why, never Running
// with its processes active, and fails with KLN-6007 once its schedule
// timeout, counted from the pods' creation, has passed.
func TestKubeGangOfAMisnamedSchedulerIsQueuedThenTimesOut(t *testing.T) {
	c := newCluster(t)
	home := newHome(t)
	writeFile(t, home, "config.yaml", fmt.Sprintf("backend: kubernetes\nkubernetes:\n  kubeconfig: %s\n  namespace: %s\n"+
		"  gangScheduler: coscheduling\n  schedulerName: no-such-scheduler\n", c.kubeconfig, c.ns))
	cmd := startKiln(t, home, "run", writeFile(t, t.TempDir(), "job.yaml", misnamedGang))
	id := newestRun(t, home)
	var queued apiv1.NodeStatus
	waitFor(t, "the job to show Queued", func() bool {
		run := describe(t, home, id)
		queued = trainNode(t, &run)
		return strings.HasPrefix(queued.Message, "queued: ")
	})
	cond := map[string]apiv1.Condition{}
	for _, k := range queued.Conditions {
		cond[k.Type] = k
	}
	if q := cond[apiv1.ConditionQueued]; q.Status != "True" || q.Reason != "WaitingForScheduler" || !strings.Contains(q.Message, `"no-such-scheduler"`) {
		t.Errorf("Queued condition %+v, want True, WaitingForScheduler, naming the scheduler", q)
	}
	if r := cond[apiv1.ConditionRunning]; r.Status == "True" {
		t.Errorf("Running condition %+v while no pod is placed", r)
	}
	if len(queued.Replicas) != 1 || queued.Replicas[0].Active != 0 || queued.Replicas[0].Pending != 2 {
		t.Errorf("replicas %+v, want 2 pending and none active", queued.Replicas)
	}
	_ = cmd.Wait()
	run := describe(t, home, id)
	n := trainNode(t, &run)
	if n.Phase != apiv1.PhaseFailed || n.Code != apiv1.CodeUnschedulable ||
		!strings.Contains(n.Message, "within 15s of its creation") || !strings.Contains(n.Message, `"no-such-scheduler"`) {
		t.Fatalf("job %s %s %q, want Failed with %s after 15s naming the scheduler", n.Phase, n.Code, n.Message, apiv1.CodeUnschedulable)
	}
	if len(n.Attempts) != 1 {
		t.Errorf("%d attempts: a pod no scheduler serves is not retried", len(n.Attempts))
	}
}

// trainNode is the training job's node of a TrainJob's run.
func trainNode(t *testing.T, run *apiv1.Run) apiv1.NodeStatus {
	t.Helper()
	for _, n := range run.Status.Nodes {
		if n.Kind == apiv1.NodeKindTrain && n.Parent == "" {
			return n
		}
	}
	t.Fatalf("run %s has no training job", run.ID)
	return apiv1.NodeStatus{}
}

// coscheduledJob is a 2-node TrainJob whose runtime, not the backend's
// configuration, asks for scheduler-plugins' coscheduling.
const coscheduledJob = `apiVersion: kiln.dev/v1alpha1
kind: TrainingRuntime
metadata: {name: cosched}
spec:
  mlPolicy: {numNodes: 2, plain: {}}
  gangPolicy: {scheduler: coscheduling, scheduleTimeoutSeconds: 60}
---
apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: together}
spec:
  runtimeRef: {name: cosched}
  trainer:
    image: busybox:1.36
    command: [sh, -c, "echo placed"]
    resourcesPerNode: {cpu: 500m, memory: 16Mi}
  podTemplate:
    metadata:
      annotations: {kwok.kiln.dev/exit-code: "0", kwok.kiln.dev/delay: 1s}
`

// TestKubeRuntimePodGroupPolicyPicksTheGangScheduler: the backend names no
// gang scheduler; the runtime's pod-group policy gives the job a PodGroup
// and the real coscheduling scheduler places its pods together.
func TestKubeRuntimePodGroupPolicyPicksTheGangScheduler(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	r := kiln(t, home, "run", writeFile(t, t.TempDir(), "job.yaml", coscheduledJob))
	if r.code != 0 {
		t.Fatalf("kiln run exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	id := runID(t, r.stdout)
	pods := c.pods(t, id)
	if len(pods) != 2 {
		t.Fatalf("%d pods, want 2", len(pods))
	}
	for _, p := range pods {
		if p.Spec.SchedulerName != "scheduler-plugins-scheduler" || p.Labels["scheduling.x-k8s.io/pod-group"] == "" || p.Spec.NodeName == "" {
			t.Errorf("pod %s: scheduler %q, pod group %q, node %q; want the coscheduler's, placed", p.Name,
				p.Spec.SchedulerName, p.Labels["scheduling.x-k8s.io/pod-group"], p.Spec.NodeName)
		}
	}
}
