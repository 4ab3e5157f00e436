package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// modelServer serves /weights.bin with an ETag, /plain.bin with no
// validator at all, and 404 for anything else; gets counts the GETs.
func modelServer(t *testing.T, gets *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		switch r.URL.Path {
		case "/weights.bin":
			w.Header().Set("ETag", `"v1"`)
			fmt.Fprint(w, "weights-v1")
		case "/plain.bin":
			fmt.Fprint(w, "plain")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// initJob is a TrainJob of two torch nodes that fetch dataset and model,
// each node writing what it found to seen.<rank> in dir.
func initJob(t *testing.T, dir, dataset, model string) string {
	t.Helper()
	script := `import os, pathlib
d, m = os.environ["KILN_DATASET_DIR"], os.environ["KILN_MODEL_DIR"]
seen = [p.relative_to(d).as_posix() + "=" + p.read_text().strip() for p in sorted(pathlib.Path(d).rglob("*")) if p.is_file()]
seen += ["model/" + p.name + "=" + p.read_text().strip() for p in sorted(pathlib.Path(m).iterdir())]
pathlib.Path(os.environ["SEEN"], "seen." + os.environ["RANK"]).write_text(" ".join(seen))
`
	return writeFile(t, dir, "job.yaml", fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: fetched}
spec:
  runtimeRef: {name: torch-distributed}
  initializer:
    dataset: {storageUri: %q}
    model: {storageUri: %q}
  trainer:
    numNodes: 2
    numProcPerNode: 1
    resourcesPerNode: {cpu: 100m}
    env: [{name: SEEN, value: %q}]
    command: [/usr/bin/python3, -c, %q]
`, dataset, model, dir, script))
}

func seen(t *testing.T, dir, rank string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "seen."+rank))
	if err != nil {
		t.Fatalf("the trainer's rank %s wrote nothing: %v", rank, err)
	}
	_ = os.Remove(filepath.Join(dir, "seen."+rank))
	return string(b)
}

// TestInitializersFetchOnceBeforeTheTrainerAndAreCached fetches a local
// directory (a relative path) and a file over HTTP, once per job for two
// nodes; a second run with the cache on reuses both without fetching,
// and a changed dataset is fetched again.
func TestInitializersFetchOnceBeforeTheTrainerAndAreCached(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	var gets atomic.Int32
	srv := modelServer(t, &gets)
	if err := os.MkdirAll(filepath.Join(dir, "data", "train"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "data"), "rows.csv", "a,b\n")
	writeFile(t, filepath.Join(dir, "data", "train"), "part-0", "x\n")
	job := initJob(t, dir, "data", srv.URL+"/weights.bin")

	first := runOK(t, home, "--cache", "on", job)
	want := "rows.csv=a,b train/part-0=x model/weights.bin=weights-v1"
	for _, rank := range []string{"0", "1"} {
		if got := seen(t, dir, rank); got != want {
			t.Errorf("rank %s saw %q, want %q", rank, got, want)
		}
	}
	if n := gets.Load(); n != 1 {
		t.Errorf("the model was downloaded %d times for a two-node job, want once", n)
	}
	for _, name := range []string{"dataset-initializer", "model-initializer"} {
		n := nodeNamed(t, first, name)
		if len(n.Attempts) != 1 || n.Cache == nil || n.Cache.Result != apiv1.CacheStored {
			t.Errorf("first run: %s has %d attempts and cache %+v, want one attempt, Stored", name, len(n.Attempts), n.Cache)
		}
	}
	if logs := kiln(t, home, "logs", string(first.ID), "model-initializer"); !strings.Contains(logs.stdout+logs.stderr, "fetched "+srv.URL+"/weights.bin") {
		t.Errorf("the model initializer's log does not say what it fetched: %q", logs.stdout+logs.stderr)
	}

	second := runOK(t, home, "--cache", "on", job)
	for _, name := range []string{"dataset-initializer", "model-initializer"} {
		if c := cacheResult(t, second, name); c.Result != apiv1.CacheHit || c.SourceRun != first.ID {
			t.Errorf("second run: %s cache %+v, want a Hit from %s", name, c, first.ID)
		}
	}
	if n := gets.Load(); n != 1 {
		t.Errorf("the second run downloaded the model again (%d GETs in all), want the cached copy", n)
	}
	if n := nodeNamed(t, second, "trainer"); len(n.Attempts) != 1 || n.Phase != apiv1.PhaseSucceeded {
		t.Errorf("second run: trainer %s with %d attempts, want one attempt that succeeded", n.Phase, len(n.Attempts))
	}
	if got := seen(t, dir, "1"); got != want {
		t.Errorf("second run: rank 1 saw %q, want %q", got, want)
	}

	writeFile(t, filepath.Join(dir, "data"), "rows.csv", "a,b\nc,d\n")
	third := runOK(t, home, "--cache", "on", job)
	if c := cacheResult(t, third, "dataset-initializer"); c.Result == apiv1.CacheHit {
		t.Errorf("a changed dataset was served from the cache: %+v", c)
	}
	if c := cacheResult(t, third, "model-initializer"); c.Result != apiv1.CacheHit {
		t.Errorf("an unchanged model was not served from the cache: %+v", c)
	}
	if got := seen(t, dir, "0"); !strings.Contains(got, "rows.csv=a,b\nc,d") {
		t.Errorf("third run: rank 0 saw %q, want the new rows", got)
	}
}

// TestAnInitializerWhoseServerSendsNoValidatorIsNotCached: without ETag
// or Last-Modified kiln cannot tell a changed file, so it fetches it
// every time and says why.
func TestAnInitializerWhoseServerSendsNoValidatorIsNotCached(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	var gets atomic.Int32
	srv := modelServer(t, &gets)
	writeFile(t, dir, "rows.csv", "r\n")
	job := initJob(t, dir, "file://"+filepath.Join(dir, "rows.csv"), srv.URL+"/plain.bin")
	for range 2 {
		run := runOK(t, home, "--cache", "on", job)
		c := cacheResult(t, run, "model-initializer")
		if c.Result != apiv1.CacheUnavailable || !strings.Contains(c.Message, "neither ETag nor Last-Modified") {
			t.Errorf("model-initializer cache %+v, want Unavailable saying the server sends no validator", c)
		}
	}
	if n := gets.Load(); n != 2 {
		t.Errorf("%d GETs for two runs, want two", n)
	}
	if got := seen(t, dir, "0"); got != "rows.csv=r model/plain.bin=plain" {
		t.Errorf("rank 0 saw %q", got)
	}
}

// TestInitializerErrors: a scheme kiln cannot fetch is refused at submit
// naming the field; a missing file, a 404 and an unreachable server fail
// the job with KLN-3025 naming the initializer and the URI, and the
// trainer never starts.
func TestInitializerErrors(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	var gets atomic.Int32
	srv := modelServer(t, &gets)
	for _, tc := range []struct{ uri, want string }{
		{"hf://tatsu-lab/alpaca", "KLN-1055"},
		{"gs://bucket/data", "KLN-1055"},
		{"s3://bucket/data", "KLN-1056"},
	} {
		r := kiln(t, home, "run", initJob(t, dir, tc.uri, srv.URL+"/weights.bin"))
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "spec.initializer.dataset.storageUri") {
			t.Errorf("%s: exit %d, %q; want %s naming spec.initializer.dataset.storageUri", tc.uri, r.code, r.stderr, tc.want)
		}
	}
	if got := runs(t, home); len(got) != 0 {
		t.Fatalf("refused jobs left %d runs", len(got))
	}
	for _, tc := range []struct{ model, why string }{
		{srv.URL + "/missing.bin", "does not exist"},
		{"http://127.0.0.1:1/weights.bin", "cannot be reached"},
		{filepath.Join(dir, "no-such-model"), "does not exist"},
	} {
		r := kiln(t, home, "run", "-q", initJob(t, dir, dir, tc.model))
		if r.code != 1 {
			t.Fatalf("%s: exit %d, want 1: %s", tc.model, r.code, r.stderr)
		}
		run := describe(t, home, runID(t, r.stdout+r.stderr))
		m := nodeNamed(t, run, "model-initializer")
		if run.Status.Code != apiv1.CodeInitializer || m.Code != apiv1.CodeInitializer ||
			!strings.Contains(m.Message, "model initializer could not fetch "+tc.model) || !strings.Contains(m.Message, tc.why) {
			t.Errorf("%s: run %s, model-initializer %s %q; want KLN-3025 naming it and why (%s)", tc.model, run.Status.Code, m.Code, m.Message, tc.why)
		}
		if tr := nodeNamed(t, run, "trainer"); tr.Phase != apiv1.PhaseSkipped || len(tr.Attempts) != 0 {
			t.Errorf("%s: trainer %s with %d attempts, want Skipped and never started", tc.model, tr.Phase, len(tr.Attempts))
		}
	}
}

// TestASuspendedTrainJobFetchesNothingAndSecretRefIsABearerToken: while
// the job is suspended its initializer waits too; once unsuspended it
// downloads with the secretRef's value, a kiln secret, as its token.
func TestASuspendedTrainJobFetchesNothingAndSecretRefIsABearerToken(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1) // the cache's HEAD fetches nothing
		}
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "private rows")
	}))
	t.Cleanup(srv.Close)
	set := exec.Command(kilnBin, "--home", home, "secret", "set", "hub-token")
	set.Stdin = strings.NewReader("s3cret\n")
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("kiln secret set: %v: %s", err, out)
	}
	job := writeFile(t, dir, "job.yaml", `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: private}
spec:
  runtimeRef: {name: plain}
  suspend: true
  initializer:
    dataset: {storageUri: "`+srv.URL+`/rows.csv", secretRef: {name: hub-token}}
  trainer:
    resourcesPerNode: {cpu: 100m}
    command: [/bin/sh, -c, 'cat $KILN_DATASET_DIR/rows.csv > `+filepath.Join(dir, "seen")+`']
`)
	run := startKiln(t, home, "run", "-q", job)
	waitFor(t, "the job to be suspended", func() bool {
		list := runs(t, home)
		return len(list) == 1 && list[0].Status.Phase == apiv1.PhaseSuspended
	})
	id := runs(t, home)[0].ID
	if n := nodeNamed(t, describe(t, home, id), "dataset-initializer"); n.Phase != apiv1.PhaseSuspended || gets.Load() != 0 {
		t.Errorf("while suspended the initializer is %s after %d downloads, want Suspended and none", n.Phase, gets.Load())
	}
	if r := kiln(t, home, "unsuspend", string(id)); r.code != 0 {
		t.Fatalf("kiln unsuspend: %d %s", r.code, r.stderr)
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("kiln run after unsuspend: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "seen")); err != nil || string(b) != "private rows" {
		t.Errorf("the trainer read %q (%v), want the rows the token opened", b, err)
	}
	if c := nodeNamed(t, describe(t, home, id), "dataset-initializer").Cache; c == nil || c.Result != apiv1.CacheUnavailable {
		t.Errorf("cache %+v, want Unavailable: the server answers kiln's HEAD without the token with 401", c)
	}
}

// TestInitializersThroughTheServer: the same job submitted to kiln serve
// reads its relative dataset path from the submitter's directory.
func TestInitializersThroughTheServer(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	// Tasks write the test's files; under --isolation users kiln itself
	// must be where every account may run it (it is not, in a test).
	base, admin, _ := startServeAs(t, home, nil, nil, "--isolation", "none")
	var gets atomic.Int32
	srv := modelServer(t, &gets)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "data"), "rows.csv", "s\n")
	job := initJob(t, dir, "data", srv.URL+"/weights.bin")
	r := kilnIn(t, dir, append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin), "run", job)
	if r.code != 0 {
		t.Fatalf("kiln run through the server exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if got := seen(t, dir, "1"); got != "rows.csv=s model/weights.bin=weights-v1" {
		t.Errorf("rank 1 saw %q", got)
	}
}
