package e2e

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// lifeWorkflow is a workflow named name whose task runs command, with
// spec lines added (ttlSecondsAfterFinished, historyLimit).
func lifeWorkflow(name, command, spec string) string {
	return `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: ` + name + `}
spec:
` + spec + `  tasks:
  - {name: t, command: [/bin/sh, -c, '` + command + `']}
`
}

// runOnce runs the workflow in file to its end and returns its run's ID.
func runOnce(t *testing.T, home, file string) apiv1.RunID {
	t.Helper()
	r := kiln(t, home, "run", file)
	if r.code != 0 {
		t.Fatalf("kiln run %s exited %d: %s", file, r.code, r.stderr)
	}
	return runID(t, r.stdout+r.stderr)
}

func runIDs(t *testing.T, home string) []apiv1.RunID {
	t.Helper()
	var out []apiv1.RunID
	for _, r := range runs(t, home) {
		out = append(out, r.ID)
	}
	return out
}

func runDir(home string, id apiv1.RunID) string { return filepath.Join(home, "runs", string(id)) }

// wantGone checks that run id has no record (describe says KLN-4001) and no directory.
func wantGone(t *testing.T, home string, id apiv1.RunID) {
	t.Helper()
	r := kiln(t, home, "describe", "run", string(id))
	if r.code == 0 || !strings.Contains(r.stderr, string(apiv1.CodeRunNotFound)) {
		t.Errorf("describe of deleted run %s exited %d: %s%s; want %s", id, r.code, r.stdout, r.stderr, apiv1.CodeRunNotFound)
	}
	if exists(runDir(home, id)) {
		t.Errorf("the directory of deleted run %s is still there", id)
	}
}

// wantKept checks that run id still has its record and its directory.
func wantKept(t *testing.T, home string, id apiv1.RunID) {
	t.Helper()
	if got := describe(t, home, id); got.ID != id || !got.Status.Phase.Done() {
		t.Errorf("kept run %s reads back as %+v", id, got.Status)
	}
	if !exists(filepath.Join(runDir(home, id), "t", "1", "stdout")) {
		t.Errorf("the log of kept run %s is gone", id)
	}
}

func TestDeleteRunIsRefusedWhileRunningAndForceCancelsFirst(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	other := runOnce(t, home, writeFile(t, dir, "quick.yaml", lifeWorkflow("quick", "echo done", "")))
	started := filepath.Join(dir, "started")
	slow := startKiln(t, home, "run", writeFile(t, dir, "slow.yaml", lifeWorkflow("slow", "touch "+started+"; exec sleep 300", "")))
	waitFor(t, "the slow task to start", func() bool { return exists(started) })
	var id apiv1.RunID
	for _, r := range runs(t, home) {
		if r.Name == "slow" {
			id = r.ID
		}
	}

	r := kiln(t, home, "delete", "run", string(id))
	if r.code != 1 || !strings.Contains(r.stderr, string(apiv1.CodeRunPhase)) || !strings.Contains(r.stderr, "--force") {
		t.Errorf("delete of a running run exited %d: %s; want %s with a hint of --force", r.code, r.stderr, apiv1.CodeRunPhase)
	}
	if got := describe(t, home, id); got.Status.Phase.Done() || !exists(runDir(home, id)) {
		t.Fatalf("a refused delete touched the run: %s", got.Status.Phase)
	}

	r = kiln(t, home, "delete", "run", "--force", string(id))
	if r.code != 0 || !strings.Contains(r.stdout, "run "+string(id)+" deleted") {
		t.Fatalf("delete --force exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if err := waitExit(slow, 30*time.Second); err == nil {
		t.Error("kiln run of the deleted run exited 0, want the failure of a cancelled run")
	}
	wantGone(t, home, id)
	wantKept(t, home, other)
	if got := runIDs(t, home); !slices.Equal(got, []apiv1.RunID{other}) {
		t.Errorf("runs = %v, want only %s", got, other)
	}

	r = kiln(t, home, "delete", "run", "nope-12345")
	if r.code != 1 || !strings.Contains(r.stderr, string(apiv1.CodeRunNotFound)) {
		t.Errorf("delete of an unknown run exited %d: %s; want %s", r.code, r.stderr, apiv1.CodeRunNotFound)
	}
}

func TestDeleteRunThroughTheServer(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	call := func(method, path, body string) (int, []byte) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+admin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	code, b := call("DELETE", "/api/v1/runs/nope-12345", "")
	if code != http.StatusNotFound || !strings.Contains(string(b), string(apiv1.CodeRunNotFound)) {
		t.Errorf("DELETE of an unknown run = %d %s, want 404 with %s", code, b, apiv1.CodeRunNotFound)
	}
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	dir := t.TempDir()
	var ids []apiv1.RunID
	for _, name := range []string{"first", "second"} {
		r := kilnIn(t, dir, client, "run", writeFile(t, dir, name+".yaml", lifeWorkflow(name, "echo hi", "")))
		if r.code != 0 {
			t.Fatalf("kiln run through the server exited %d: %s", r.code, r.stderr)
		}
		ids = append(ids, runID(t, r.stdout+r.stderr))
	}
	r := kilnIn(t, dir, client, "delete", "run", string(ids[0]))
	if r.code != 0 {
		t.Fatalf("kiln delete run through the server exited %d: %s", r.code, r.stderr)
	}
	wantGone(t, home, ids[0])
	wantKept(t, home, ids[1])
	if code, b := call("DELETE", "/api/v1/runs/"+string(ids[1]), ""); code != http.StatusOK {
		t.Errorf("DELETE = %d %s, want 200", code, b)
	}
	wantGone(t, home, ids[1])
	r = kilnIn(t, dir, client, "delete", "run", "nope-12345")
	if r.code != 1 || !strings.Contains(r.stderr, string(apiv1.CodeRunNotFound)) {
		t.Errorf("kiln delete run of an unknown run through the server exited %d: %s; want %s", r.code, r.stderr, apiv1.CodeRunNotFound)
	}
}

// trainJobWithTTL is a TrainJob whose run is deleted ttl seconds after it finished.
func trainJobWithTTL(ttl string) string {
	return `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: brief-train}
spec:
  runtimeRef: {name: plain}
  runPolicy: {ttlSecondsAfterFinished: ` + ttl + `}
  trainer:
    command: [/usr/bin/python3, -c, 'print("trained")']
    resourcesPerNode: {cpu: 100m}
`
}

func TestGCRemovesExpiredRunsAndOrphansButNoCache(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	// Each kiln run collects as it starts: the runs that expire come last,
	// and expire after the last kiln run started.
	kept := runOnce(t, home, writeFile(t, dir, "kept.yaml", lifeWorkflow("kept", "echo kept", "")))
	brief := runOnce(t, home, writeFile(t, dir, "brief.yaml", lifeWorkflow("brief", "echo brief", "  ttlSecondsAfterFinished: 3\n")))
	train := runOnce(t, home, writeFile(t, dir, "train.yaml", trainJobWithTTL("3")))
	orphan := filepath.Join(home, "runs", "orphan-abcde")
	cached := filepath.Join(home, "cache", "entry", "value")
	for _, p := range []string{filepath.Join(orphan, "t", "1"), filepath.Dir(cached)} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Dir(cached), "value", "cached")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(orphan, old, old); err != nil {
		t.Fatal(err)
	}
	<-time.After(3100 * time.Millisecond)

	r := kiln(t, home, "gc", "--dry-run")
	for _, want := range []string{"would delete " + string(brief) + " (ttl", "would delete " + string(train) + " (ttl", "would delete orphan-abcde (orphan"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("kiln gc --dry-run says:\n%s\nwant a line with %q", r.stdout, want)
		}
	}
	if len(runIDs(t, home)) != 3 || !exists(orphan) {
		t.Fatal("kiln gc --dry-run deleted something")
	}
	r = kiln(t, home, "gc")
	if r.code != 0 || strings.Count(r.stdout, "deleted ") != 3 || strings.Contains(r.stdout, string(kept)) {
		t.Errorf("kiln gc exited %d:\n%s%s\nwant the two expired runs and the orphan deleted", r.code, r.stdout, r.stderr)
	}
	wantGone(t, home, brief)
	wantGone(t, home, train)
	wantKept(t, home, kept)
	if exists(orphan) {
		t.Error("the orphan directory is still there")
	}
	if b, err := os.ReadFile(cached); err != nil || string(b) != "cached" {
		t.Errorf("the cache entry = %q, %v; want it untouched", b, err)
	}
	if r := kiln(t, home, "gc"); r.code != 0 || !strings.Contains(r.stdout, "nothing to delete") {
		t.Errorf("a second kiln gc exited %d: %s%s; want nothing to delete", r.code, r.stdout, r.stderr)
	}
}

func TestServeCollectsExpiredRuns(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServeAs(t, home, nil, nil, "--gc-interval", "200ms")
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	dir := t.TempDir()
	submit := func(file string) apiv1.RunID {
		r := kilnIn(t, dir, client, "run", file)
		if r.code != 0 {
			t.Fatalf("kiln run through the server exited %d: %s", r.code, r.stderr)
		}
		return runID(t, r.stdout+r.stderr)
	}
	kept := submit(writeFile(t, dir, "kept.yaml", lifeWorkflow("kept", "echo kept", "")))
	brief := submit(writeFile(t, dir, "brief.yaml", lifeWorkflow("brief", "echo brief", "  ttlSecondsAfterFinished: 1\n")))
	train := submit(writeFile(t, dir, "train.yaml", trainJobWithTTL("1")))
	waitFor(t, "kiln serve to delete the expired runs", func() bool {
		return !exists(runDir(home, brief)) && !exists(runDir(home, train))
	})
	wantGone(t, home, brief)
	wantGone(t, home, train)
	wantKept(t, home, kept)
}

func TestHistoryLimitKeepsTheNewestRuns(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	limited := writeFile(t, dir, "limited.yaml", lifeWorkflow("limited", "echo run", "  historyLimit: {succeeded: 2, failed: 1}\n"))
	failing := writeFile(t, dir, "limited-fail.yaml", lifeWorkflow("limited", "exit 3", "  historyLimit: {succeeded: 2, failed: 1}\n"))
	var ok, failed []apiv1.RunID
	for range 4 {
		ok = append(ok, runOnce(t, home, limited))
	}
	for range 2 {
		if r := kiln(t, home, "run", failing); r.code == 0 {
			t.Fatal("the failing workflow succeeded")
		}
	}
	for _, r := range runs(t, home) {
		if r.Status.Phase == apiv1.PhaseFailed {
			failed = append(failed, r.ID)
		}
	}
	other := runOnce(t, home, writeFile(t, dir, "other.yaml", lifeWorkflow("other", "echo other", "")))
	if r := kiln(t, home, "gc"); r.code != 0 {
		t.Fatalf("kiln gc exited %d: %s", r.code, r.stderr)
	}
	// runs lists newest first: the newest failed run, the two newest that succeeded.
	want := []apiv1.RunID{other, failed[0], ok[3], ok[2]}
	if got := runIDs(t, home); !slices.Equal(got, want) {
		t.Errorf("runs after kiln gc = %v, want %v", got, want)
	}
	for _, id := range append([]apiv1.RunID{ok[0], ok[1]}, failed[1:]...) {
		wantGone(t, home, id)
	}

	bad := writeFile(t, dir, "bad.yaml", lifeWorkflow("bad", "true", "  ttlSecondsAfterFinished: -1\n  historyLimit: {failed: -2}\n"))
	r := kiln(t, home, "validate", bad)
	for _, want := range []string{string(apiv1.CodeOutOfRange), "spec.ttlSecondsAfterFinished", "spec.historyLimit.failed", "bad.yaml", "Workflow/bad"} {
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("kiln validate of negative limits exited %d: %s; want it to say %q", r.code, r.stderr, want)
		}
	}
}
