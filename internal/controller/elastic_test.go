package controller

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// fakeTorchrun writes an executable named torchrun (an elastic job's
// command must be one) that runs script with sh.
func fakeTorchrun(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "torchrun")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// elasticTask is a train task of an elastic torch runtime, one CPU a node.
func elasticTask(name string, minNodes, maxNodes int, torchrun string) string {
	return `  - name: ` + name + `
    train:
      runtime: elastic
      resolvedRuntime: {mlPolicy: {torch: {numProcPerNode: 1, elasticPolicy: {minNodes: ` + itoa(minNodes) + `, maxNodes: ` + itoa(maxNodes) + `}}}}
      command: [` + torchrun + `]
      resourcesPerNode: {cpu: 1}
`
}

func itoa(n int) string { return strconv.Itoa(n) }

func (e *engine) eventsOf(t *testing.T, id apiv1.RunID, reason string) []apiv1.Event {
	t.Helper()
	events, err := e.store.ListEvents(t.Context(), store.ListEventsParams{Run: id})
	if err != nil {
		t.Fatal(err)
	}
	var out []apiv1.Event
	for _, ev := range events {
		if ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out
}

func TestElasticGangStartsWithWhatFitsAndGrowsWhenRoomComesBack(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	out := t.TempDir()
	torchrun := fakeTorchrun(t, `echo "$PET_NNODES" > `+out+`/$$; sleep 4`)
	id := e.submit(t, "spec:\n  tasks:\n  - {name: hog, command: [sleep, \"1.5\"], resources: {cpu: 1}}\n"+elasticTask("job", 1, 2, torchrun), nil)
	run := e.wait(t, id)
	job := nodeOf(run, "job")
	if job.Phase != apiv1.PhaseSucceeded || len(job.Attempts) != 1 {
		t.Fatalf("job = %s with %d attempts: %s", job.Phase, len(job.Attempts), job.Message)
	}
	if a := job.Attempts[0]; a.Nodes != 1 || a.Joined != 1 {
		t.Errorf("attempt started on %d nodes, %d joined; want 1 (all that fit beside hog) and 1 once hog ended", a.Nodes, a.Joined)
	}
	agents, _ := os.ReadDir(out)
	if len(agents) != 2 {
		t.Errorf("%d agents ran, want 2", len(agents))
	}
	for _, a := range agents {
		if b, _ := os.ReadFile(filepath.Join(out, a.Name())); string(b) != "1:2\n" {
			t.Errorf("an agent had PET_NNODES=%q, want 1:2", b)
		}
	}
	if got := e.eventsOf(t, id, "HostJoined"); len(got) != 1 || !strings.Contains(got[0].Message, "host 1 joined") {
		t.Errorf("HostJoined events = %+v, want one for host 1", got)
	}
}

func TestElasticGangOutlivesALossAboveItsMinimum(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 3)
	dir := t.TempDir()
	// The first agent but node 0's (which holds the rendezvous) to start
	// fails at once; the others finish later.
	torchrun := fakeTorchrun(t, `case "$PET_RDZV_CONF" in *is_host=false*) mkdir `+dir+`/first 2>/dev/null && exit 1;; esac; sleep 1`)
	id := e.submit(t, "spec:\n  tasks:\n"+elasticTask("job", 2, 3, torchrun), nil)
	job := nodeOf(e.wait(t, id), "job")
	if job.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("job = %s %q, want Succeeded without the lost node", job.Phase, job.Message)
	}
	if a := job.Attempts[0]; a.Nodes != 3 || len(a.Dropped) != 1 {
		t.Errorf("attempt started on %d nodes and dropped %v; want 3 and one", a.Nodes, a.Dropped)
	}
	if got := e.eventsOf(t, id, "HostLost"); len(got) != 1 || !strings.Contains(got[0].Message, "exited with code 1") {
		t.Errorf("HostLost events = %+v, want one saying how it ended", got)
	}
}

func TestElasticGangFailsBelowItsMinimum(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 3)
	dir := t.TempDir()
	// Two agents fail, one after the other: the second leaves one of three, below minNodes 2.
	// Node 0, which holds the rendezvous, is not one of them.
	torchrun := fakeTorchrun(t, `case "$PET_RDZV_CONF" in *is_host=false*) mkdir `+dir+`/a 2>/dev/null && exit 1; mkdir `+dir+`/b 2>/dev/null && { sleep 0.5; exit 2; };; esac; sleep 5`)
	id := e.submit(t, "spec:\n  tasks:\n"+elasticTask("job", 2, 3, torchrun), nil)
	job := nodeOf(e.wait(t, id), "job")
	if job.Phase != apiv1.PhaseFailed || job.Code != apiv1.CodeElasticTooFew || !strings.Contains(job.Message, "fewer than minNodes (2)") {
		t.Errorf("job = %s %s %q, want Failed with %s", job.Phase, job.Code, job.Message, apiv1.CodeElasticTooFew)
	}
}
