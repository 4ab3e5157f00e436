package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// runtimeAndJob is the shape of Trainer's examples/yaml/04-volcano-
// integration.yaml: a ClusterTrainingRuntime and the TrainJob that uses
// it, in one file, as kubectl apply -f takes them. NAMESPACE is replaced.
const runtimeAndJob = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-e2e-volcano
  labels: {trainer.kubeflow.org/framework: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  podGroupPolicy: {volcano: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers: [{name: node, image: pytorch/pytorch}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: volcano-e2e
  namespace: NAMESPACE
spec:
  runtimeRef: {apiGroup: trainer.kubeflow.org, kind: ClusterTrainingRuntime, name: torch-e2e-volcano}
  trainer:
    numNodes: 2
    command: [sh, -c, 'echo "node $PET_NODE_RANK of $PET_NNODES trained"']
`

func runtimeAndJobIn(namespace string) string {
	return strings.Replace(runtimeAndJob, "NAMESPACE", namespace, 1)
}

var submittedRun = regexp.MustCompile(`TrainJob/volcano-e2e submitted in project (\S+): run (\S+)`)

// TestApplyStoresTheRuntimeThenRunsTheJob applies one file of a runtime
// and the job that uses it with kiln's own engine: the runtime is stored,
// then the job runs with it and is watched to its end, as kiln run does.
// kiln run of the same file says to use kiln apply; a file with a broken
// job stores nothing.
func TestApplyStoresTheRuntimeThenRunsTheJob(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	file := writeFile(t, dir, "volcano.yaml", runtimeAndJobIn("default"))

	r := kiln(t, home, "run", "-f", file)
	if r.code == 0 || !strings.Contains(r.stderr, "KLN-1003") || !strings.Contains(r.stderr, "kiln apply -f "+file+" stores ClusterTrainingRuntime/torch-e2e-volcano first and then runs TrainJob/volcano-e2e") {
		t.Fatalf("kiln run of a runtime and its job: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = kiln(t, home, "validate", file)
	if r.code != 0 || !strings.Contains(r.stdout, "ok: "+file+": ClusterTrainingRuntime/torch-e2e-volcano") || !strings.Contains(r.stdout, "ok: "+file+": TrainJob/volcano-e2e") {
		t.Fatalf("kiln validate checks the job with the runtime beside it, as apply runs it: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = kiln(t, home, "apply", "-f", file)
	if r.code != 0 {
		t.Fatalf("kiln apply: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	stored := strings.Index(r.stdout, "ClusterTrainingRuntime/torch-e2e-volcano created (version 1)")
	m := submittedRun.FindStringSubmatchIndex(r.stdout)
	if stored < 0 || m == nil || m[0] < stored {
		t.Fatalf("kiln apply does not say it stored the runtime, then submitted the job:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "Succeeded") {
		t.Errorf("kiln apply did not watch the run to its end:\n%s", r.stdout)
	}
	id := apiv1.RunID(r.stdout[m[4]:m[5]])
	run := describe(t, home, id)
	if run.Status.Phase != apiv1.PhaseSucceeded || run.Project != "default" && run.Project != "" {
		t.Errorf("run %s is %s in project %q, want Succeeded in default", id, run.Status.Phase, run.Project)
	}
	logs := kiln(t, home, "logs", string(id)).stdout
	for _, want := range []string{"node 0 of 2 trained", "node 1 of 2 trained"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	if g := kiln(t, home, "get", "runtimes"); !regexp.MustCompile(`torch-e2e-volcano +ClusterTrainingRuntime`).MatchString(g.stdout) {
		t.Errorf("kiln get runtimes does not list the applied runtime:\n%s", g.stdout)
	}

	// Nothing half-written: a job kiln cannot run keeps its runtime out too.
	broken := strings.NewReplacer("torch-e2e-volcano", "torch-e2e-broken", "numNodes: 2", "numNodes: 0").Replace(runtimeAndJobIn("default"))
	r = kiln(t, home, "apply", "-f", writeFile(t, dir, "broken.yaml", broken))
	if r.code == 0 || !strings.Contains(r.stderr, "spec.trainer.numNodes") {
		t.Errorf("kiln apply of a broken job: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if g := kiln(t, home, "get", "runtimes"); strings.Contains(g.stdout, "torch-e2e-broken") {
		t.Errorf("the runtime of a refused apply was stored:\n%s", g.stdout)
	}
	if n := len(runs(t, home)); n != 1 {
		t.Errorf("%d runs after a refused apply, want the first alone", n)
	}
}

// TestNamespaceIsTheProject: metadata.namespace names the project of a
// run or an apply when kiln has that project and none is given, must be
// the project given, and is refused, naming the field, otherwise.
func TestNamespaceIsTheProject(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	job := func(ns string) string {
		return writeFile(t, dir, ns+".yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: wf, namespace: "+ns+"}\n"+
			"spec: {tasks: [{name: hi, command: [sh, -c, 'echo hi']}]}\n")
	}
	r := kiln(t, home, "run", "-q", job("ml"))
	if r.code == 0 || !strings.Contains(r.stderr, "KLN-1089") || !strings.Contains(r.stderr, "metadata.namespace") || !strings.Contains(r.stderr, "--project ml") {
		t.Fatalf("kiln run in a namespace kiln has no project of: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := kiln(t, home, "apply", "-f", runtimeAndJobFile(t, dir, "ml")); r.code == 0 || !strings.Contains(r.stderr, "KLN-1089") {
		t.Errorf("kiln apply of a TrainJob in namespace ml: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if g := kiln(t, home, "get", "runtimes"); strings.Contains(g.stdout, "torch-e2e-volcano") {
		t.Errorf("a refused apply stored its runtime:\n%s", g.stdout)
	}
	// Upstream's examples name namespace kubeflow: refused until given.
	ex := filepath.Join(operatorDir(t), "ex-pytorch-simple.yaml")
	if r := kiln(t, home, "run", "-q", ex); r.code == 0 || !strings.Contains(r.stderr, "KLN-1089") || !strings.Contains(r.stderr, "give --project kubeflow") {
		t.Errorf("kiln run of an example in namespace kubeflow, no such project: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A template stored in ml makes the project.
	tmpl := writeFile(t, dir, "tmpl.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: WorkflowTemplate\nmetadata: {name: hello}\nspec: {tasks: [{name: hi, command: [echo, hi]}]}\n")
	if r := kiln(t, home, "apply", "-f", tmpl, "--project", "ml"); r.code != 0 {
		t.Fatalf("kiln apply --project ml: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := kiln(t, home, "run", "-q", job("ml")); r.code != 0 {
		t.Fatalf("kiln run in namespace ml: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if list := runs(t, home); len(list) != 1 || list[0].Project != "ml" {
		t.Errorf("runs %+v, want one in project ml", list)
	}
	if r := kiln(t, home, "run", "-q", "--project", "cv", job("ml")); r.code == 0 || !strings.Contains(r.stderr, `metadata.namespace is "ml", but the documents go to project "cv"`) {
		t.Errorf("kiln run --project cv of a workflow in namespace ml: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The Trainer documents of one file, applied into their namespace.
	r = kiln(t, home, "apply", "-f", runtimeAndJobFile(t, dir, "ml"))
	if m := submittedRun.FindStringSubmatch(r.stdout); r.code != 0 || m == nil || m[1] != "ml" {
		t.Errorf("kiln apply of a TrainJob in namespace ml, which exists: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func runtimeAndJobFile(t *testing.T, dir, ns string) string {
	t.Helper()
	return writeFile(t, dir, "both-"+ns+".yaml", runtimeAndJobIn(ns))
}

// TestApplyRunsThroughTheServer applies the runtime and its job through
// kiln serve's API: the server stores the runtime and runs the job, and
// the CLI prints the run's ID and leaves it to the server. A namespace
// other than the project sent is refused with its reason.
func TestApplyRunsThroughTheServer(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	dir := t.TempDir()
	other := t.TempDir()

	r := kilnWithEnv(t, client, other, "apply", "-f", runtimeAndJobFile(t, dir, "default"))
	m := submittedRun.FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil || !strings.Contains(r.stdout, "ClusterTrainingRuntime/torch-e2e-volcano created") {
		t.Fatalf("kiln apply through the server: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if w := kilnWithEnv(t, client, other, "wait", m[2]); w.code != 0 {
		t.Errorf("kiln wait %s: %d\n%s%s", m[2], w.code, w.stdout, w.stderr)
	}
	if logs := kilnWithEnv(t, client, other, "logs", m[2]).stdout; !strings.Contains(logs, "node 1 of 2 trained") {
		t.Errorf("logs of the applied job:\n%s", logs)
	}
	r = kilnWithEnv(t, client, other, "apply", "-f", runtimeAndJobFile(t, dir, "ml"))
	if r.code == 0 || !strings.Contains(r.stderr, "KLN-1089") || !strings.Contains(r.stderr, `but the documents go to project "default"`) {
		t.Errorf("kiln apply of namespace ml through the server, no project given: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = kilnWithEnv(t, client, other, "apply", "--project", "ml", "-f", runtimeAndJobFile(t, dir, "ml"))
	if m := submittedRun.FindStringSubmatch(r.stdout); r.code != 0 || m == nil || m[1] != "ml" {
		t.Errorf("kiln apply --project ml of namespace ml through the server: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
