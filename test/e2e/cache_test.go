package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// cachedPipeline is three cached stages that append their names to a
// ledger: prep writes a parameter and a file, train a directory read from
// the file, eval reads both. The train stage's cache version and the
// length of the data are params; the ledger says what really ran.
func cachedPipeline(ledger string) string {
	return fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: cached}
spec:
  params:
  - {name: rows, default: "3"}
  - {name: pause, default: "0"}
  tasks:
  - name: prep
    command: [/bin/sh, -c, 'echo prep >> %[1]s; seq {{params.rows}} > $KILN_OUTPUTS/data.txt; printf rows > $KILN_OUTPUTS/kind']
    cache: {version: "1"}
    outputs:
      parameters: [{name: kind}]
      artifacts: [{name: data, path: data.txt}]
  - name: train
    dependsOn: [prep]
    command: [/bin/sh, -c, 'echo train >> %[1]s; sleep {{params.pause}}; mkdir -p $KILN_OUTPUTS/model; wc -l < {{tasks.prep.outputs.artifacts.data}} > $KILN_OUTPUTS/model/weights; printf {{tasks.prep.outputs.parameters.kind}} > $KILN_OUTPUTS/score']
    cache: {version: "{{params.version}}"}
    outputs:
      parameters: [{name: score}]
      artifacts: [{name: model, path: model}]
  - name: eval
    dependsOn: [train]
    command: [/bin/sh, -c, 'echo eval >> %[1]s; cat {{tasks.train.outputs.artifacts.model}}/weights > $KILN_OUTPUTS/weights; printf {{tasks.train.outputs.parameters.score}} > $KILN_OUTPUTS/score']
    cache: {version: "1"}
    outputs:
      parameters: [{name: weights}, {name: score}]
`, ledger)
}

// ledgerOf reads what ran since the last call, and empties the ledger.
func ledgerOf(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	_ = os.Remove(path)
	return strings.Fields(string(b))
}

func runOK(t *testing.T, home string, args ...string) apiv1.Run {
	t.Helper()
	r := kiln(t, home, append([]string{"run", "-q"}, args...)...)
	if r.code != 0 {
		t.Fatalf("kiln run %v exited %d\n%s%s", args, r.code, r.stdout, r.stderr)
	}
	return describe(t, home, runID(t, r.stdout))
}

func cacheResult(t *testing.T, run apiv1.Run, task string) *apiv1.CacheStatus {
	t.Helper()
	n := nodeNamed(t, run, task)
	if n.Cache == nil {
		t.Fatalf("run %s: task %s has no cache status", run.ID, task)
	}
	return n.Cache
}

func TestASecondRunIsServedFromTheCacheAndChangesMiss(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	wf := writeFile(t, dir, "wf.yaml", strings.Replace(cachedPipeline(ledger), "{{params.version}}", "1", 1))

	first := runOK(t, home, wf)
	if got := ledgerOf(t, ledger); strings.Join(got, " ") != "prep train eval" {
		t.Fatalf("first run ran %v, want every stage", got)
	}
	for _, task := range []string{"prep", "train", "eval"} {
		if c := cacheResult(t, first, task); c.Result != apiv1.CacheStored || c.Key == "" {
			t.Errorf("first run: %s cache %+v, want Stored with a key", task, c)
		}
	}

	second := runOK(t, home, wf)
	if got := ledgerOf(t, ledger); len(got) != 0 {
		t.Fatalf("second run ran %v, want nothing: every stage is cached", got)
	}
	if !strings.Contains(second.Status.Message, "3 results from the cache") {
		t.Errorf("second run's message %q does not say its tasks came from the cache", second.Status.Message)
	}
	for _, task := range []string{"prep", "train", "eval"} {
		c, n := cacheResult(t, second, task), nodeNamed(t, second, task)
		if c.Result != apiv1.CacheHit || c.SourceRun != first.ID || c.SourceNode != task || len(n.Attempts) != 0 {
			t.Errorf("second run: %s cache %+v with %d attempts, want a Hit from %s and no attempt", task, c, len(n.Attempts), first.ID)
		}
	}
	if got, want := nodeNamed(t, second, "eval").Outputs, nodeNamed(t, first, "eval").Outputs; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reused outputs %v, want the first run's %v", got, want)
	}
	if !strings.Contains(kiln(t, home, "describe", "run", string(second.ID)).stdout, "reused from run "+string(first.ID)) {
		t.Error("describe does not say where the reused results came from")
	}
	if logs := kiln(t, home, "logs", string(second.ID)); !strings.Contains(logs.stderr, "[prep] ran nothing here: its result came from the cache (kiln logs "+string(first.ID)+" prep)") {
		t.Errorf("kiln logs of a run served from the cache does not say where the output is: %q", logs.stderr)
	}
	if logs := kiln(t, home, "logs", string(second.ID), "prep"); logs.code == 0 || !strings.Contains(logs.stderr, "KLN-4026") {
		t.Errorf("kiln logs of a task served from the cache: exit %d, %q; want KLN-4026", logs.code, logs.stderr)
	}

	// A new input artifact (more rows) misses prep and train; eval then
	// reads a different model and misses too.
	runOK(t, home, "-p", "rows=5", wf)
	if got := ledgerOf(t, ledger); strings.Join(got, " ") != "prep train eval" {
		t.Errorf("run with a changed input ran %v, want every stage", got)
	}

	// A new version of train misses train only: its model has the same
	// content, so eval, keyed by that content, is reused.
	wf2 := writeFile(t, dir, "wf2.yaml", strings.Replace(cachedPipeline(ledger), "{{params.version}}", "2", 1))
	v2 := runOK(t, home, wf2)
	if got := ledgerOf(t, ledger); strings.Join(got, " ") != "train" {
		t.Errorf("run with train's version changed ran %v, want train alone", got)
	}
	if c := cacheResult(t, v2, "eval"); c.Result != apiv1.CacheHit {
		t.Errorf("eval after train's new version: %+v, want a Hit (its input's content is unchanged)", c)
	}
}

func TestCacheModesAndADamagedEntry(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	wf := writeFile(t, dir, "wf.yaml", strings.Replace(cachedPipeline(ledger), "{{params.version}}", "1", 1))
	first := runOK(t, home, wf)
	ledgerOf(t, ledger)

	off := runOK(t, home, "--cache", "off", wf)
	if got := ledgerOf(t, ledger); len(got) != 3 {
		t.Errorf("--cache off ran %v, want every stage", got)
	}
	if c := cacheResult(t, off, "prep"); c.Result != apiv1.CacheBypassed {
		t.Errorf("--cache off: prep %+v, want Bypassed", c)
	}
	over := runOK(t, home, "--cache", "overwrite", wf)
	if got := ledgerOf(t, ledger); len(got) != 3 {
		t.Errorf("--cache overwrite ran %v, want every stage", got)
	}
	if c := cacheResult(t, over, "train"); c.Result != apiv1.CacheStored {
		t.Errorf("--cache overwrite: train %+v, want Stored", c)
	}
	if r := kiln(t, home, "run", "--cache", "sometimes", wf); r.code == 0 || !strings.Contains(r.stderr, "--cache") {
		t.Errorf("a bad --cache value: exit %d, %q", r.code, r.stderr)
	}

	// Alter every stored file: the next run must not reuse a wrong result.
	blobs := filepath.Join(home, "cache", "blobs")
	altered := 0
	_ = filepath.Walk(blobs, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			_ = os.Chmod(p, 0o644)
			if os.WriteFile(p, []byte("tampered\n"), 0o644) == nil {
				altered++
			}
		}
		return nil
	})
	if altered == 0 {
		t.Fatal("no stored file to alter; the test proves nothing")
	}
	third := runOK(t, home, wf)
	if got := ledgerOf(t, ledger); strings.Join(got, " ") != "prep train" {
		t.Errorf("after the damage ran %v, want prep and train (whose artifacts were altered)", got)
	}
	if c := cacheResult(t, third, "prep"); c.Result != apiv1.CacheStored || !strings.Contains(c.Message, "damaged") {
		t.Errorf("prep after the damage: %+v, want Stored anew, saying the old entry was damaged", c)
	}
	if w := nodeNamed(t, third, "eval").Outputs["weights"]; strings.TrimSpace(w) != "3" {
		t.Errorf("eval's weights %q after the damage, want 3: a damaged entry gave a wrong result", w)
	}
	if c := cacheResult(t, third, "eval"); c.SourceRun != over.ID {
		t.Errorf("eval after the damage: %+v, want the overwriting run's result (%s, not %s)", c, over.ID, first.ID)
	}
}

func TestTwoConcurrentRunsComputeOnce(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	wf := writeFile(t, dir, "wf.yaml", strings.Replace(cachedPipeline(ledger), "{{params.version}}", "1", 1))
	a := startKiln(t, home, "run", "-q", "-p", "pause=2", wf)
	b := startKiln(t, home, "run", "-q", "-p", "pause=2", wf)
	if err := a.Wait(); err != nil {
		t.Fatalf("first run: %v", err)
	}
	if err := b.Wait(); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if got := ledgerOf(t, ledger); strings.Join(got, " ") != "prep train eval" {
		t.Fatalf("two identical runs at once ran %v, want each stage once", got)
	}
	hits := 0
	for _, r := range runs(t, home) {
		run := describe(t, home, r.ID)
		for _, n := range run.Status.Nodes {
			if n.Cache != nil && n.Cache.Result == apiv1.CacheHit {
				hits++
			}
		}
	}
	if hits != 3 {
		t.Errorf("%d tasks were served from the cache, want the 3 of the run that waited", hits)
	}
}

func TestKillNineDuringACachedRunStoresItsResultOnce(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	wf := writeFile(t, dir, "wf.yaml", strings.Replace(cachedPipeline(ledger), "{{params.version}}", "1", 1))
	first := startKiln(t, home, "run", "-q", "-p", "pause=3", wf)
	waitFor(t, "train to start", func() bool { return strings.Contains(readOrEmpty(ledger), "train") })
	killNine(t, first)
	if r := kiln(t, home, "resume"); r.code != 0 {
		t.Fatalf("resume exited %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := ledgerOf(t, ledger); strings.Join(got, " ") != "prep train eval" {
		t.Fatalf("killed and resumed run ran %v, want each stage once", got)
	}
	resumed := describe(t, home, runs(t, home)[0].ID)
	if c := cacheResult(t, resumed, "train"); c.Result != apiv1.CacheStored {
		t.Errorf("train after kill -9 and resume: %+v, want Stored", c)
	}
	again := runOK(t, home, "-p", "pause=3", wf)
	if got := ledgerOf(t, ledger); len(got) != 0 {
		t.Errorf("the run after the resumed one ran %v, want all from the cache", got)
	}
	if c := cacheResult(t, again, "train"); c.SourceRun != resumed.ID {
		t.Errorf("train reused %+v, want the resumed run's result", c)
	}
}

func TestMaxAgeAndCacheOnAGateIsRefused(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	wf := writeFile(t, dir, "wf.yaml", fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: aged}
spec:
  tasks:
  - name: fetch
    command: [/bin/sh, -c, 'echo fetch >> %s']
    cache: {maxAge: 1s}
`, ledger))
	runOK(t, home, wf)
	<-time.After(1500 * time.Millisecond) // past maxAge
	late := runOK(t, home, wf)
	if got := ledgerOf(t, ledger); len(got) != 2 {
		t.Errorf("ran %v, want fetch twice: the stored result was older than maxAge", got)
	}
	if c := cacheResult(t, late, "fetch"); c.Result != apiv1.CacheStored || !strings.Contains(c.Message, "maxAge") {
		t.Errorf("late run: %+v", c)
	}
	bad := writeFile(t, dir, "bad.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: bad}
spec:
  tasks:
  - name: wait
    gate: {approve: {}}
    cache: {version: "1"}
  - name: work
    command: [echo]
    cache: {maxAge: soon}
`)
	r := kiln(t, home, "validate", bad)
	for _, want := range []string{"KLN-1012", "spec.tasks[0].cache", "KLN-1009", "spec.tasks[1].cache.maxAge"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("validate of a bad cache: %q lacks %q", r.stderr, want)
		}
	}
}

// readOrEmpty is a file's content, or "" if it cannot be read.
func readOrEmpty(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestATrainingJobIsKeyedByItsFrameworkAndWorldSize caches a gang: the
// same job hits; more nodes or another framework misses; more CPU per
// node, which does not change what it computes, hits.
func TestATrainingJobIsKeyedByItsFrameworkAndWorldSize(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	job := func(runtime string, nodes int, cpu string) string {
		return writeFile(t, dir, fmt.Sprintf("%s-%d-%s.yaml", runtime, nodes, cpu), fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: gang}
spec:
  tasks:
  - name: fit
    cache: {version: "1"}
    train:
      runtime: %s
      numNodes: %d
      resourcesPerNode: {cpu: %s}
      command: [sh, -c, 'echo fit >> %s; echo done > $KILN_OUTPUTS/state']
    outputs: {parameters: [{name: state}]}
`, runtime, nodes, cpu, ledger))
	}
	steps := []struct {
		file string
		runs int
		hit  bool
	}{
		{job("plain", 2, "100m"), 2, false},
		{job("plain", 2, "100m"), 0, true},
		{job("plain", 2, "200m"), 0, true},
		{job("plain", 3, "100m"), 3, false},
		{job("xgboost", 2, "100m"), 2, false},
	}
	for k, s := range steps {
		run := runOK(t, home, s.file)
		if got := len(ledgerOf(t, ledger)); got != s.runs {
			t.Errorf("step %d (%s): %d processes ran, want %d", k, filepath.Base(s.file), got, s.runs)
		}
		if c := cacheResult(t, run, "fit"); (c.Result == apiv1.CacheHit) != s.hit {
			t.Errorf("step %d (%s): cache %+v, want hit %v", k, filepath.Base(s.file), c, s.hit)
		}
	}
}

// TestASecretIsKeyedByItsValueWithoutShowingIt changes a secret a cached
// task reads: the task runs again, and nothing kiln shows holds the value.
func TestASecretIsKeyedByItsValueWithoutShowingIt(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	setSecret := func(v string) {
		t.Helper()
		cmd := exec.Command(kilnBin, "--home", home, "secret", "set", "token")
		cmd.Stdin = strings.NewReader(v + "\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kiln secret set: %v %s", err, out)
		}
	}
	wf := writeFile(t, dir, "wf.yaml", fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: secretive}
spec:
  tasks:
  - name: pull
    command: [sh, -c, 'echo pull >> %s']
    env: [{name: TOKEN, valueFrom: {secret: token}}]
    cache: {}
`, ledger))
	const first, second = "first-value-9f1c", "second-value-77ab"
	setSecret(first)
	runOK(t, home, wf)
	runOK(t, home, wf)
	setSecret(second)
	last := runOK(t, home, wf)
	if got := ledgerOf(t, ledger); len(got) != 2 {
		t.Errorf("ran %v, want pull twice: once, then again for the new secret", got)
	}
	if c := cacheResult(t, last, "pull"); c.Result == apiv1.CacheHit {
		t.Errorf("a changed secret hit the cache: %+v", c)
	}
	shown := kiln(t, home, "describe", "run", string(last.ID), "-o", "json").stdout + kiln(t, home, "cache", "ls", "-o", "json").stdout
	for _, v := range []string{first, second} {
		if strings.Contains(shown, v) {
			t.Errorf("a secret's value is shown: %s", v)
		}
	}
}
