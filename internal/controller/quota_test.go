package controller

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/sqlite"
	"kiln.dev/kiln/internal/workflow"
)

// submitTo submits a one-task workflow to project.
func (e *engine) submitTo(t *testing.T, project, task string) apiv1.RunID {
	t.Helper()
	src := filepath.Join(t.TempDir(), "wf.yaml")
	text := "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: wf}\nspec:\n  tasks:\n  - " + task + "\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, err := workflow.ReadFiles([]string{src})
	if err != nil {
		t.Fatal(err)
	}
	wf, err := workflow.DecodeWorkflow(&docs[0])
	if err != nil {
		t.Fatal(err)
	}
	plan, err := workflow.Compile(&docs[0], wf, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.Submit(t.Context(), SubmitParams{Plan: plan, Source: src, Project: project})
	if err != nil {
		t.Fatal(err)
	}
	return run.ID
}

// TestQuotasHoldOnTheEnginesOwnPool: on an in-process pool (the
// Kubernetes backend's), a project's run limit holds its second run
// Pending with KLN-2041 until the first ends, and a task of higher
// priority preempts a running one of its project (KLN-3095, a system
// failure, retried).
func TestQuotasHoldOnTheEnginesOwnPool(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2, func(c *Config) { c.Pool = resource.NewPool(resource.Request{MilliCPU: 2000, Memory: 1 << 40}) })
	err := e.SetQuotas(t.Context(), []apiv1.ProjectQuota{
		{Metadata: apiv1.QuotaMetadata{Name: "limited"}, Spec: apiv1.ProjectQuotaSpec{Runs: 1}},
		{Metadata: apiv1.QuotaMetadata{Name: "urgent"}, Spec: apiv1.ProjectQuotaSpec{Preemption: apiv1.PreemptLowerPriority}},
	})
	if err != nil {
		t.Fatal(err)
	}
	first := e.submitTo(t, "limited", "{name: a, command: [sleep, '0.5'], resources: {cpu: 100m}}")
	second := e.submitTo(t, "limited", "{name: a, command: ['true'], resources: {cpu: 100m}}")
	f, s := e.wait(t, first), e.wait(t, second)
	if s.Status.StartedAt.Before(*f.Status.FinishedAt) {
		t.Errorf("the second run started at %v, before the first ended at %v", s.Status.StartedAt, f.Status.FinishedAt)
	}
	events, err := e.store.ListEvents(t.Context(), store.ListEventsParams{Run: second})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(events, func(ev apiv1.Event) bool { return ev.Code == apiv1.CodeQuotaRunsWait }) {
		t.Errorf("the held run's events %+v; want one with KLN-2041", events)
	}

	low := e.submitTo(t, "urgent", "{name: a, command: [sleep, '5'], resources: {cpu: '2'}}")
	for deadline := time.Now().Add(30 * time.Second); ; {
		run, err := e.store.GetRun(t.Context(), low)
		if err == nil && run.Status.Nodes[0].Phase == apiv1.PhaseRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the low task never ran")
		}
		<-time.After(10 * time.Millisecond)
	}
	high := e.submitTo(t, "urgent", "{name: a, command: ['true'], resources: {cpu: '2'}, priority: 5}")
	e.wait(t, high)
	at := e.wait(t, low).Status.Nodes[0].Attempts
	if len(at) != 2 || at[0].Code != apiv1.CodePreempted || !at[0].System || at[1].Phase != apiv1.PhaseSucceeded {
		t.Errorf("low task attempts %+v; want a preempted one (KLN-3095, system) and a retry that succeeded", at)
	}
}

// TestAnEngineWithoutQuotasLeavesAnothersAlone: a second engine on the
// same home whose store holds no quotas (a kiln run beside a kiln serve
// on PostgreSQL) does not turn off the quotas the first gave the shared
// supervisor: a project limited to one cpu still runs one task at a time.
func TestAnEngineWithoutQuotasLeavesAnothersAlone(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 4)
	err := e.SetQuotas(t.Context(), []apiv1.ProjectQuota{
		{Metadata: apiv1.QuotaMetadata{Name: "tiny"}, Spec: apiv1.ProjectQuotaSpec{CPU: "1", Borrowing: new(false)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	other, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "kiln.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	second := startEngine(t, e.home, other, 4, "other-store")
	if err := second.SetQuotas(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	a := e.submitTo(t, "tiny", "{name: a, command: [sleep, '0.5'], resources: {cpu: '1'}}")
	b := e.submitTo(t, "tiny", "{name: a, command: [sleep, '0.5'], resources: {cpu: '1'}}")
	ra, rb := e.wait(t, a).Status.Nodes[0].Attempts[0], e.wait(t, b).Status.Nodes[0].Attempts[0]
	if ra.StartedAt.Before(*rb.FinishedAt) && rb.StartedAt.Before(*ra.FinishedAt) {
		t.Errorf("project tiny's runs overlapped (%v-%v, %v-%v): its quota of 1 cpu was turned off by an engine without quotas",
			ra.StartedAt, ra.FinishedAt, rb.StartedAt, rb.FinishedAt)
	}
}
