package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/client"
)

// quotaServer is a kiln serve with a quota file applied and a client of
// it, as the admin.
type quotaServer struct {
	home, base string
	env        []string
	api        *client.Client
}

// startQuotaServe starts kiln serve with args on a new home, and applies
// quotas (a ProjectQuota file) through it.
func startQuotaServe(t *testing.T, quotas string, args ...string) *quotaServer {
	t.Helper()
	home := newHome(t)
	file := writeFile(t, t.TempDir(), "quotas.yaml", quotas)
	if r := kiln(t, home, "apply", "-f", file); r.code != 0 || !strings.Contains(r.stdout, "created") {
		t.Fatalf("kiln apply quotas: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	base, admin, _ := startServeAs(t, home, nil, nil, args...) // its engine starts with the quotas
	s := &quotaServer{home: home, base: base, env: append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin), api: client.New(base, admin)}
	if r := kilnWithEnv(t, s.env, home, "apply", "-f", file); r.code != 0 || !strings.Contains(r.stdout, "unchanged") {
		t.Fatalf("kiln apply quotas again through the server: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if r := kilnWithEnv(t, s.env, home, "get", "quotas"); !strings.Contains(r.stdout, "PROJECT") {
		t.Fatalf("kiln get quotas: %s%s", r.stdout, r.stderr)
	}
	return s
}

func (s *quotaServer) submit(t *testing.T, project, yaml string) *apiv1.Run {
	t.Helper()
	run, err := s.api.Submit(t.Context(), apiv1.Submission{Project: project, Files: []apiv1.SourceFile{{Name: "wf.yaml", Data: []byte(yaml)}}})
	if err != nil {
		t.Fatalf("submit to %s: %v", project, err)
	}
	return run
}

func (s *quotaServer) get(t *testing.T, id apiv1.RunID) *apiv1.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	r, err := s.api.GetRun(ctx, id)
	if err != nil {
		t.Fatalf("get run %s: %v", id, err)
	}
	return r
}

func (s *quotaServer) waitSucceeded(t *testing.T, id apiv1.RunID) *apiv1.Run {
	t.Helper()
	var r *apiv1.Run
	waitFor(t, fmt.Sprintf("run %s to succeed", id), func() bool { r = s.get(t, id); return r.Status.Phase == apiv1.PhaseSucceeded })
	return r
}

// cpuSleepers is a workflow of n tasks each taking cpu and sleeping secs.
func cpuSleepers(name string, n int, cpu, secs string, priority int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: %s}\nspec:\n  tasks:\n", name)
	for i := range n {
		fmt.Fprintf(&b, "  - {name: t%d, command: [sleep, '%s'], resources: {cpu: '%s'}, priority: %d}\n", i, secs, cpu, priority)
	}
	return b.String()
}

// TestQuotaHoldsRunsAndTasksWithTheReasonShown: a project's cpu quota,
// applied to a running server, holds its second task waiting (KLN-2040),
// and its limit of one run holds its second run Pending (KLN-2041), each
// with the reason in kiln describe run; both go on once room comes back.
func TestQuotaHoldsRunsAndTasksWithTheReasonShown(t *testing.T) {
	t.Parallel()
	s := startQuotaServe(t, `apiVersion: kiln.dev/v1alpha1
kind: ProjectQuota
metadata: {name: someone-else}
spec: {gpu: "1"}
`, "--cpus", "4")
	quota := writeFile(t, t.TempDir(), "team-q.yaml", `apiVersion: kiln.dev/v1alpha1
kind: ProjectQuota
metadata: {name: team-q}
spec: {cpu: "1", runs: 1, borrowing: false}
`)
	if r := kilnWithEnv(t, s.env, s.home, "apply", "-f", quota); r.code != 0 || !strings.Contains(r.stdout, "ProjectQuota/team-q created") {
		t.Fatalf("kiln apply team-q's quota through the server: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if r := kilnWithEnv(t, s.env, s.home, "get", "quotas", "-o", "json"); !strings.Contains(r.stdout, `"team-q"`) {
		t.Fatalf("kiln get quotas through the server lacks team-q: %s%s", r.stdout, r.stderr)
	}
	first := s.submit(t, "team-q", cpuSleepers("first", 2, "1", "3", 0))
	waitFor(t, "a task of the first run waiting for its quota", func() bool {
		for _, n := range s.get(t, first.ID).Status.Nodes {
			if n.Phase == apiv1.PhaseWaiting && n.Code == apiv1.CodeQuotaWait && strings.Contains(n.Message, "project team-q uses cpu 1") {
				return true
			}
		}
		return false
	})
	second := s.submit(t, "team-q", cpuSleepers("second", 1, "1", "0", 0))
	waitFor(t, "the second run held by the run limit", func() bool {
		r := s.get(t, second.ID)
		return r.Status.Phase == apiv1.PhasePending && r.Status.Code == apiv1.CodeQuotaRunsWait
	})
	d := kilnWithEnv(t, s.env, s.home, "describe", "run", string(second.ID))
	if !strings.Contains(d.stdout, "project team-q has 1 of 1 runs running") {
		t.Errorf("kiln describe run of the held run does not give the reason:\n%s%s", d.stdout, d.stderr)
	}
	if r := s.get(t, first.ID); r.Status.Phase != apiv1.PhaseRunning {
		t.Errorf("first run %s; want it Running, one task at a time", r.Status.Phase)
	}
	f := s.waitSucceeded(t, first.ID)
	a, b := f.Status.Nodes[0].Attempts[0], f.Status.Nodes[1].Attempts[0]
	if a.StartedAt.Before(*b.FinishedAt) && b.StartedAt.Before(*a.FinishedAt) {
		t.Errorf("the first run's two tasks overlapped (%v-%v, %v-%v); the quota of 1 cpu allows one at a time", a.StartedAt, a.FinishedAt, b.StartedAt, b.FinishedAt)
	}
	sec := s.waitSucceeded(t, second.ID)
	if sec.Status.StartedAt.Before(*f.Status.FinishedAt) {
		t.Errorf("the second run started at %v, before the first ended at %v", sec.Status.StartedAt, f.Status.FinishedAt)
	}
}

// fairWindow is how long TestFairSharingFollowsWeights measures: a
// minute, or KILN_FAIR_WINDOW (a Go duration, e.g. 20s) to try it faster.
func fairWindow(t *testing.T) time.Duration {
	if v := os.Getenv("KILN_FAIR_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("KILN_FAIR_WINDOW=%q: %v", v, err)
		}
		return d
	}
	return time.Minute
}

// TestFairSharingFollowsWeights: two projects of weights 1 and 3 keep
// a 4-cpu pool saturated with 1-cpu tasks; over the window, the cpu-seconds
// their attempts ran (from the attempts' recorded start and end) stand
// 1:3, within 10 %.
func TestFairSharingFollowsWeights(t *testing.T) {
	t.Parallel()
	window := fairWindow(t)
	s := startQuotaServe(t, `apiVersion: kiln.dev/v1alpha1
kind: ProjectQuota
metadata: {name: light}
spec: {weight: 1}
---
apiVersion: kiln.dev/v1alpha1
kind: ProjectQuota
metadata: {name: heavy}
spec: {weight: 3}
`, "--cpus", "4")
	n := int(window.Seconds())*4 + 40 // more than either could run in the window
	light := s.submit(t, "light", cpuSleepers("light", n, "1", "1", 0))
	heavy := s.submit(t, "heavy", cpuSleepers("heavy", n, "1", "1", 0))
	warm := 3 * time.Second
	from := time.Now().Add(warm)
	to := from.Add(window)
	<-time.After(warm + window + 2*time.Second)
	used := map[string]float64{}
	for _, run := range []*apiv1.Run{light, heavy} {
		r := s.get(t, run.ID)
		for _, node := range r.Status.Nodes {
			for _, a := range node.Attempts {
				if a.StartedAt == nil {
					continue
				}
				end := to
				if a.FinishedAt != nil && a.FinishedAt.Before(to) {
					end = *a.FinishedAt
				}
				start := *a.StartedAt
				if start.Before(from) {
					start = from
				}
				if end.After(start) {
					used[run.Project] += end.Sub(start).Seconds()
				}
			}
		}
		if err := s.api.Cancel(t.Context(), run.ID); err != nil {
			t.Errorf("cancel %s: %v", run.ID, err)
		}
	}
	ratio := used["heavy"] / used["light"]
	total := used["heavy"] + used["light"]
	t.Logf("fair sharing over %s: light (weight 1) %.1f cpu-s, heavy (weight 3) %.1f cpu-s: %.2f:1, pool used %.0f%%",
		window, used["light"], used["heavy"], ratio, 100*total/(4*window.Seconds()))
	if math.Abs(ratio-3)/3 > 0.1 {
		t.Errorf("heavy:light = %.2f; want 3 within 10%%", ratio)
	}
	if total < 0.6*4*window.Seconds() { // loose: a loaded machine starts tasks late, for both alike
		t.Errorf("the two projects used %.1f cpu-s of %.0f; want the pool saturated", total, 4*window.Seconds())
	}
}

// TestPreemptionEvictsLowerPriorityAndRetriesIt: with preemption
// LowerPriority, a task of higher priority evicts its project's running
// task of lower priority; the evicted attempt is a system failure
// (KLN-3095) and its retry succeeds once the high one is done.
func TestPreemptionEvictsLowerPriorityAndRetriesIt(t *testing.T) {
	t.Parallel()
	s := startQuotaServe(t, `apiVersion: kiln.dev/v1alpha1
kind: ProjectQuota
metadata: {name: team-p}
spec: {preemption: LowerPriority}
`, "--cpus", "2")
	low := s.submit(t, "team-p", cpuSleepers("low", 1, "2", "4", 0))
	waitFor(t, "the low task running", func() bool { return s.get(t, low.ID).Status.Nodes[0].Phase == apiv1.PhaseRunning })
	high := s.submit(t, "team-p", cpuSleepers("high", 1, "2", "1", 10))
	h := s.waitSucceeded(t, high.ID)
	l := s.waitSucceeded(t, low.ID)
	at := l.Status.Nodes[0].Attempts
	if len(at) != 2 {
		t.Fatalf("low task attempts %+v; want two: the preempted one and its retry", at)
	}
	if at[0].Code != apiv1.CodePreempted || !at[0].System || !strings.Contains(at[0].Message, "preempted by "+string(high.ID)+"/t0") {
		t.Errorf("first low attempt: code %s, system %v, %q; want KLN-3095, a system failure, preempted by the high task", at[0].Code, at[0].System, at[0].Message)
	}
	if at[1].Phase != apiv1.PhaseSucceeded || at[1].StartedAt.Before(*h.Status.Nodes[0].Attempts[0].FinishedAt) {
		t.Errorf("low retry %+v; want it to succeed, started after the high task ended", at[1])
	}
	if hs := h.Status.Nodes[0].Attempts[0].StartedAt; hs.Before(*at[0].FinishedAt) {
		t.Errorf("the high task started at %v, before its victim ended at %v", hs, at[0].FinishedAt)
	}
}

// TestQuotaFilesApplyAndBadOnesAreRefused: the example applies and lists;
// a bad quota is refused with a code naming its file, object and field,
// and nothing of the file is stored.
func TestQuotaFilesApplyAndBadOnesAreRefused(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	if r := kiln(t, home, "apply", "-f", filepath.Join(repoRoot(), "examples", "quotas", "quotas.yaml")); r.code != 0 {
		t.Fatalf("kiln apply the example: exit %d: %s", r.code, r.stderr)
	}
	r := kiln(t, home, "get", "quotas")
	for _, want := range []string{"production  16", "LowerPriority", "adhoc", "false"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("kiln get quotas lacks %q:\n%s", want, r.stdout)
		}
	}
	bad := writeFile(t, t.TempDir(), "bad.yaml", `apiVersion: kiln.dev/v1alpha1
kind: ProjectQuota
metadata: {name: fresh}
spec: {cpu: "2"}
---
apiVersion: kiln.dev/v1alpha1
kind: ProjectQuota
metadata: {name: broken}
spec: {cpu: "-1", preemption: Always}
`)
	r = kiln(t, home, "apply", "-f", bad)
	for _, want := range []string{"KLN-1023", "KLN-1081", "bad.yaml", "ProjectQuota/broken", "spec.cpu", "spec.preemption"} {
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("kiln apply of a bad quota: exit %d, stderr lacks %q:\n%s", r.code, want, r.stderr)
		}
	}
	if r.code == 0 || strings.Contains(r.stderr, "KLN-1004") {
		t.Errorf("kiln apply of a bad quota speaks of templates the file never meant to hold:\n%s", r.stderr)
	}
	if r := kiln(t, home, "get", "quotas"); strings.Contains(r.stdout, "fresh") {
		t.Errorf("a file with a bad quota stored its good one:\n%s", r.stdout)
	}
	quotasRoundTrip(t, home)
}

// quotasRoundTrip: what kiln get quotas -o yaml prints, kiln apply takes
// back unchanged; kiln get quota NAME shows one; kiln delete quota
// removes one (a quota of a typo'd project).
func quotasRoundTrip(t *testing.T, home string) {
	t.Helper()
	typo := writeFile(t, t.TempDir(), "typo.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: ProjectQuota\nmetadata: {name: prodution}\nspec: {cpu: 1}\n")
	if r := kiln(t, home, "apply", "-f", typo); r.code != 0 || !strings.Contains(r.stdout, "ProjectQuota/prodution created") {
		t.Fatalf("kiln apply a quota of cpu: 1 unquoted: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	y := kiln(t, home, "get", "quotas", "-o", "yaml")
	back := writeFile(t, t.TempDir(), "back.yaml", y.stdout)
	if r := kiln(t, home, "apply", "-f", back); r.code != 0 || strings.Count(r.stdout, "unchanged") != 4 {
		t.Errorf("kiln apply of kiln get quotas -o yaml: exit %d: %s%s\nof:\n%s", r.code, r.stdout, r.stderr, y.stdout)
	}
	if r := kiln(t, home, "get", "quota", "production"); r.code != 0 || !strings.Contains(r.stdout, "production  16") || strings.Contains(r.stdout, "adhoc") {
		t.Errorf("kiln get quota production: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if r := kiln(t, home, "get", "quota", "nobody"); r.code == 0 || !strings.Contains(r.stderr, string(apiv1.CodeNoQuota)) {
		t.Errorf("kiln get quota nobody: exit %d: %s", r.code, r.stderr)
	}
	if r := kiln(t, home, "delete", "quota", "prodution"); r.code != 0 || !strings.Contains(r.stdout, "ProjectQuota/prodution deleted") {
		t.Errorf("kiln delete quota prodution: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if r := kiln(t, home, "get", "quotas"); strings.Contains(r.stdout, "prodution") || !strings.Contains(r.stdout, "production") {
		t.Errorf("kiln get quotas after deleting prodution:\n%s", r.stdout)
	}
}

// TestQuotaBeyondAProjectsWholeQuotaSaysSoUntilItIsDeleted: a task that
// needs more than its project's whole quota, which may not borrow, waits
// saying it cannot start while the quota is what it is; kiln delete quota
// through the server lets it run, within the engine's refresh.
func TestQuotaBeyondAProjectsWholeQuotaSaysSoUntilItIsDeleted(t *testing.T) {
	t.Parallel()
	s := startQuotaServe(t, `apiVersion: kiln.dev/v1alpha1
kind: ProjectQuota
metadata: {name: tiny}
spec: {cpu: 500m, borrowing: false}
`, "--cpus", "2")
	run := s.submit(t, "tiny", cpuSleepers("big", 1, "1", "0", 0))
	want := "needs cpu 1, more than project tiny's whole quota of cpu 500m, which it may not borrow beyond"
	var last string
	waitFor(t, "the task waiting, beyond its whole quota", func() bool {
		n := s.get(t, run.ID).Status.Nodes[0]
		if now := fmt.Sprintf("%s %s %s", n.Phase, n.Code, n.Message); now != last {
			t.Log(now)
			last = now
		}
		return n.Phase == apiv1.PhaseWaiting && n.Code == apiv1.CodeQuotaWait && strings.Contains(n.Message, want)
	})
	if r := kilnWithEnv(t, s.env, s.home, "delete", "quota", "tiny"); r.code != 0 {
		t.Fatalf("kiln delete quota tiny through the server: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	s.waitSucceeded(t, run.ID)
}
