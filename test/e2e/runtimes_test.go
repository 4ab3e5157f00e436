package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// waiterRuntime is a plain TrainingRuntime whose command says it started
// (touching started), waits for gate, and prints its template's MSG: what
// each version of the runtime sets.
func waiterRuntime(kind, msg, started, gate string) string {
	return `apiVersion: kiln.dev/v1alpha1
kind: ` + kind + `
metadata: {name: waiter}
spec:
  mlPolicy: {plain: {}}
  template:
    env: [{name: MSG, value: ` + msg + `}]
    command: [/bin/sh, -c, 'touch ` + started + `; while [ ! -e ` + gate + ` ]; do sleep 0.05; done; echo "msg=$MSG"']
`
}

const waiterJob = `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: uses-waiter}
spec:
  runtimeRef: {name: waiter}
`

// runtimeCLI drives kiln on home, embedded (env nil) or through a server
// (env names it), as a user would.
type runtimeCLI struct {
	t    *testing.T
	env  []string
	home string
}

func (c runtimeCLI) kiln(args ...string) result {
	c.t.Helper()
	return kilnWithEnv(c.t, c.env, c.home, args...)
}

// must runs kiln and fails the test unless it exits 0 with stdout holding want.
func (c runtimeCLI) must(want string, args ...string) string {
	c.t.Helper()
	r := c.kiln(args...)
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		c.t.Fatalf("kiln %v = exit %d\nstdout %q\nstderr %q\nwant stdout holding %q", args, r.code, r.stdout, r.stderr, want)
	}
	return r.stdout
}

// refused runs kiln and fails the test unless it exits 1 with stderr holding want.
func (c runtimeCLI) refused(want string, args ...string) {
	c.t.Helper()
	if r := c.kiln(args...); r.code != 1 || !strings.Contains(r.stderr, want) {
		c.t.Errorf("kiln %v = exit %d %q %q; want exit 1 and %q", args, r.code, r.stdout, r.stderr, want)
	}
}

// record is what a run's stored spec says of its one train task's
// runtime: which one, and the MSG of its template.
func (c runtimeCLI) record(id string) (*apiv1.ResolvedRuntimeRef, string) {
	c.t.Helper()
	ref, spec := c.recordOf(id)
	if spec == nil || spec.Template == nil || len(spec.Template.Env) == 0 {
		c.t.Fatalf("run %s keeps no resolved runtime with a template: %+v", id, spec)
	}
	return ref, spec.Template.Env[0].Value
}

func (c runtimeCLI) runIDs() []string {
	c.t.Helper()
	var list []apiv1.Run
	if err := unmarshalList(c.must("", "get", "runs", "-o", "json"), "RunList", &list); err != nil {
		c.t.Fatal(err)
	}
	var ids []string
	for _, r := range list {
		ids = append(ids, string(r.ID))
	}
	return ids
}

// testStoredRuntimeLifecycle applies a runtime, runs a TrainJob that
// names it without shipping it, changes the runtime while the job runs and
// after it finished, and deletes it: the job ran version 1, and its record
// says so throughout.
func testStoredRuntimeLifecycle(t *testing.T, c runtimeCLI) {
	dir := sharedDir(t)
	started, gate := filepath.Join(dir, "started"), filepath.Join(dir, "gate")
	version := func(n, msg string) string {
		return writeFile(t, dir, "rt-"+n+".yaml", waiterRuntime("TrainingRuntime", msg, started, gate))
	}
	job := writeFile(t, dir, "job.yaml", waiterJob)

	c.must("TrainingRuntime/waiter created (version 1) in project default\n", "apply", "-f", version("1", "one"))
	c.must("TrainingRuntime/waiter unchanged (version 1) in project default\n", "apply", "-f", version("1", "one"))
	list := c.must("waiter", "get", "runtimes")
	if !strings.Contains(list, "NAME") || !regexpMatch(`waiter\s+TrainingRuntime\s+default\s+1\s+plain\s+stored\s+\d+s`, list) ||
		!regexpMatch(`torch-distributed\s+ClusterTrainingRuntime\s+-\s+-\s+torch\s+builtin\s+-`, list) {
		t.Errorf("get runtimes =\n%s\nwant waiter stored in default at version 1, and the built-in ones", list)
	}

	c.must("WorkflowTemplate/trains created in project default", "apply", "-f", writeFile(t, dir, "tmpl.yaml", `apiVersion: kiln.dev/v1alpha1
kind: WorkflowTemplate
metadata: {name: trains}
spec:
  tasks: [{name: t, train: {runtime: waiter, runtimeKind: TrainingRuntime}}]
`))
	c.must("ok: "+job+": TrainJob/uses-waiter", "validate", "--project", "default", job)
	c.refused("KLN-1017", "validate", job) // offline, the files alone

	run := exec.Command(kilnBin, "--home", c.home, "run", "-q", job)
	run.Env = c.env
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job to start", func() bool { _, err := os.Stat(started); return err == nil })
	c.must("TrainingRuntime/waiter configured (version 2) in project default\n", "apply", "-f", version("2", "two"))
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("kiln run of the job: %v\n%s", err, out.String())
	}
	ids := c.runIDs()
	if len(ids) != 1 {
		t.Fatalf("runs %v, want the one", ids)
	}
	first := ids[0]
	want := apiv1.ResolvedRuntimeRef{Kind: "TrainingRuntime", Name: "waiter", Project: "default", Version: 1, Source: "stored"}
	check := func(when string) {
		t.Helper()
		ref, msg := c.record(first)
		if ref == nil || *ref != want || msg != "one" {
			t.Errorf("%s: the job's record says %+v with MSG %q; want %+v and one", when, ref, msg, want)
		}
		c.must("Runtime:  TrainingRuntime/waiter version 1 (stored in project default)", "describe", "run", first)
	}
	check("changed while it ran")
	c.must("msg=one", "logs", first)

	c.must("configured (version 3)", "apply", "-f", version("3", "three"))
	check("changed after it finished")
	if y := c.must("kind: TrainingRuntime", "get", "runtime", "waiter", "--version", "1", "-o", "yaml"); !strings.Contains(y, "value: one") || !strings.Contains(y, "version: 1") {
		t.Errorf("get runtime waiter --version 1 -o yaml =\n%s\nwant version 1, MSG one", y)
	}
	current := writeFile(t, dir, "current.yaml", c.must("version: 3", "get", "runtime", "waiter", "-o", "yaml"))
	c.must("TrainingRuntime/waiter unchanged (version 3)", "apply", "-f", current)

	c.must("", "run", "-q", job)
	for _, id := range c.runIDs() {
		if id != first {
			if ref, msg := c.record(id); ref == nil || ref.Version != 3 || msg != "three" {
				t.Errorf("a job submitted after the change says %+v, MSG %q; want version 3, three", ref, msg)
			}
			c.must("msg=three", "logs", id)
		}
	}

	c.must("TrainingRuntime/waiter deleted in project default\n", "delete", "runtime", "waiter")
	check("deleted")
	c.refused("KLN-4028", "delete", "runtime", "waiter")
	c.refused("KLN-1017 "+job+":5:16: TrainJob/uses-waiter: spec.runtimeRef.name", "run", job)
	if n := len(c.runIDs()); n != 2 {
		t.Errorf("%d runs after the refused one, want 2: nothing is created", n)
	}
	c.refused("KLN-4029", "delete", "runtime", "plain", "--kind", "ClusterTrainingRuntime")
	c.refused("KLN-4029", "delete", "runtime", "mpi")
}

// testClusterRuntimes stores a ClusterTrainingRuntime over a built-in one,
// and refuses a bad apply whole.
func testClusterRuntimes(t *testing.T, c runtimeCLI) {
	dir := sharedDir(t)
	plain := writeFile(t, dir, "plain.yaml", `apiVersion: kiln.dev/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: plain}
spec: {mlPolicy: {numNodes: 2, plain: {}}}
`)
	c.must("ClusterTrainingRuntime/plain created (version 1) for every project\n", "apply", "-f", plain)
	list := c.must("plain", "get", "runtimes", "--project", "other")
	if !regexpMatch(`plain\s+ClusterTrainingRuntime\s+-\s+1\s+plain\s+stored`, list) || !regexpMatch(`plain\s+ClusterTrainingRuntime\s+-\s+-\s+plain\s+overridden`, list) {
		t.Errorf("get runtimes =\n%s\nwant the stored plain, and the built-in one overridden", list)
	}
	job := writeFile(t, dir, "job.yaml", `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: two}
spec:
  runtimeRef: {name: plain, kind: ClusterTrainingRuntime, apiGroup: trainer.kubeflow.org}
  trainer: {command: [/bin/sh, -c, 'echo node $KILN_NODE_RANK'], resourcesPerNode: {cpu: 100m}}
`)
	c.must("", "run", "-q", "--project", "other", job)
	id := c.runIDs()[0]
	if ref, _ := c.recordOf(id); ref == nil || ref.Kind != "ClusterTrainingRuntime" || ref.Version != 1 || ref.Project != "" {
		t.Errorf("the job's record says %+v; want the stored ClusterTrainingRuntime, version 1", ref)
	}
	c.refused("it is a ClusterTrainingRuntime: kiln delete runtime plain --kind ClusterTrainingRuntime", "delete", "runtime", "plain")
	c.must("ClusterTrainingRuntime/plain deleted for every project\n", "delete", "runtime", "plain", "--kind", "ClusterTrainingRuntime")
	c.must("builtin", "get", "runtime", "plain")

	bad := writeFile(t, dir, "bad.yaml", `apiVersion: kiln.dev/v1alpha1
kind: TrainingRuntime
metadata: {name: good}
spec: {mlPolicy: {plain: {}}}
---
apiVersion: kiln.dev/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: both}
spec: {mlPolicy: {torch: {}, mpi: {}}}
`)
	c.refused("KLN-1018 "+bad+":9:8: ClusterTrainingRuntime/both: spec.mlPolicy", "apply", "-f", bad)
	c.refused("KLN-1018 "+bad+":9:8: ClusterTrainingRuntime/both: spec.mlPolicy", "validate", bad)
	c.must("ok: "+plain+": ClusterTrainingRuntime/plain", "validate", plain)
	c.refused("KLN-4028", "get", "runtime", "good")
}

// recordOf is the runtime a run's one train task resolved: which one,
// and its spec, as the run's stored spec keeps them.
func (c runtimeCLI) recordOf(id string) (*apiv1.ResolvedRuntimeRef, *apiv1.TrainingRuntimeSpec) {
	c.t.Helper()
	var run apiv1.Run
	if err := json.Unmarshal([]byte(c.must("", "describe", "run", id, "-o", "json")), &run); err != nil {
		c.t.Fatal(err)
	}
	train := run.Workflow.Spec.Tasks[0].Train
	return train.ResolvedRuntimeRef, train.ResolvedRuntime
}

func TestStoredRuntimes(t *testing.T) {
	t.Parallel()
	t.Run("lifecycle", func(t *testing.T) {
		t.Parallel()
		testStoredRuntimeLifecycle(t, runtimeCLI{t: t, home: newHome(t)})
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		testClusterRuntimes(t, runtimeCLI{t: t, home: newHome(t)})
	})
}

// Through a server, kiln apply, get and delete of runtimes, and the jobs
// that name them, work as they do embedded.
func TestStoredRuntimesThroughAServer(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	t.Run("lifecycle", func(t *testing.T) {
		testStoredRuntimeLifecycle(t, runtimeCLI{t: t, env: client, home: t.TempDir()})
	})
	t.Run("cluster", func(t *testing.T) {
		testClusterRuntimes(t, runtimeCLI{t: t, env: client, home: t.TempDir()})
	})
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }

// A job whose engine died is resumed with the runtime it resolved, though
// the stored runtime was deleted meanwhile: the resumed engine compiles
// the run's stored spec, which carries it.
func TestAResumedJobKeepsItsDeletedRuntime(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	started, gate := filepath.Join(dir, "started"), filepath.Join(dir, "gate")
	c := runtimeCLI{t: t, home: home}
	c.must("created (version 1)", "apply", "-f", writeFile(t, dir, "rt.yaml", waiterRuntime("TrainingRuntime", "one", started, gate)))
	first := startKiln(t, home, "run", "-q", writeFile(t, dir, "job.yaml", waiterJob))
	waitFor(t, "the job to start", func() bool { _, err := os.Stat(started); return err == nil })
	killNine(t, first)
	c.must("TrainingRuntime/waiter deleted", "delete", "runtime", "waiter")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := c.kiln("resume"); r.code != 0 {
		t.Fatalf("resume = exit %d %s %s; want the job finished with the runtime it resolved", r.code, r.stdout, r.stderr)
	}
	id := c.runIDs()[0]
	if ref, msg := c.record(id); ref == nil || ref.Version != 1 || msg != "one" {
		t.Errorf("the resumed job's record says %+v, MSG %q; want version 1, one", ref, msg)
	}
	c.must("msg=one", "logs", id)
}
