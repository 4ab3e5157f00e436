package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// operatorDir copies testdata/trainingoperator (training-operator jobs and their
// scripts) into a directory of the test's own, where the tasks start and
// leave what they write.
func operatorDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("testdata", "trainingoperator")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "printed-") || strings.HasPrefix(e.Name(), "done-") {
			continue // a barrier's marker left by a job run in testdata itself: copied, it would let a barrier pass early
		}
		if e.IsDir() { // a stand-in Python package (paddle)
			if err := os.CopyFS(filepath.Join(dir, e.Name()), os.DirFS(filepath.Join(src, e.Name()))); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, e.Name(), string(b))
	}
	return dir
}

// runOperatorJob runs the training-operator job file of dir with kiln run
// and returns its logs once it succeeded.
func runOperatorJob(t *testing.T, dir, file string) string {
	t.Helper()
	env := frameworkEnv(t)
	home := newHome(t)
	r := kilnWithEnv(t, env, home, "run", "-q", filepath.Join(dir, file))
	if r.code != 0 {
		t.Fatalf("kiln run %s exited %d\n%s%s", file, r.code, r.stdout, r.stderr)
	}
	id := runs(t, home)[0].ID
	if run := describe(t, home, id); run.Status.Phase != apiv1.PhaseSucceeded {
		t.Errorf("run is %s, want Succeeded", run.Status.Phase)
	}
	return kilnWithEnv(t, env, home, "logs", string(id)).stdout
}

// TestOperatorJobsRunAsWritten runs training-operator jobs (kubeflow.org/v1)
// for real: each framework's processes meet with only the variables the
// operator's controller sets. One at a time: each uses the machine's CPUs.
func TestOperatorJobsRunAsWritten(t *testing.T) {
	dir := operatorDir(t)
	cases := []struct {
		file  string
		lines map[string]int // substring of the logs -> how many lines hold it
	}{
		{"pytorchjob.yaml", map[string]int{
			"master-0 | rank 0/2: all_reduce = 3 nnodes=2 nproc=1 node_rank=0": 1,
			"worker-0 | rank 1/2: all_reduce = 3 nnodes=2 nproc=1 node_rank=1": 1,
		}},
		{"mpijob.yaml", map[string]int{"allreduce = 10 hostfile=hostfile": 4, "rank 3/4": 1}},
		{"xgboostjob.yaml", map[string]int{"master-0 | rank 0/2: allreduce = 3 workers=127.0.0.1": 1, "worker-0 | rank 1/2: allreduce = 3 workers=127.0.0.1": 1}},
		{"jaxjob.yaml", map[string]int{
			"worker-0 | COORDINATOR_ADDRESS=127.0.0.1 COORDINATOR_PORT=": 1, "NUM_PROCESSES=2 PROCESS_ID=0": 1, "NUM_PROCESSES=2 PROCESS_ID=1": 1,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			logs := runOperatorJob(t, dir, tc.file)
			for want, n := range tc.lines {
				if got := strings.Count(logs, want); got != n {
					t.Errorf("%d log lines hold %q, want %d\n%s", got, want, n, logs)
				}
			}
		})
	}
}

// TestTFJobGetsTheOperatorsTFConfig checks each replica's TF_CONFIG as
// the TFJob controller writes it: the cluster's chief, worker and ps
// keys, the replica's own task, and environment "cloud".
func TestTFJobGetsTheOperatorsTFConfig(t *testing.T) {
	logs := runOperatorJob(t, operatorDir(t), "tfjob.yaml")
	line := regexp.MustCompile(`\| TF_CONFIG=(.*)`)
	tasks := map[string]bool{}
	for _, m := range line.FindAllStringSubmatch(logs, -1) {
		var cfg struct {
			Cluster map[string][]string `json:"cluster"`
			Task    struct {
				Type  string `json:"type"`
				Index int    `json:"index"`
			} `json:"task"`
			Environment string `json:"environment"`
		}
		if err := json.Unmarshal([]byte(m[1]), &cfg); err != nil {
			t.Fatalf("TF_CONFIG %q: %v", m[1], err)
		}
		if len(cfg.Cluster["chief"]) != 1 || len(cfg.Cluster["worker"]) != 2 || len(cfg.Cluster["ps"]) != 1 || len(cfg.Cluster) != 3 {
			t.Errorf("cluster %v, want one chief, two workers and one ps", cfg.Cluster)
		}
		if cfg.Environment != "cloud" {
			t.Errorf("environment %q, want cloud", cfg.Environment)
		}
		tasks[cfg.Task.Type+"-"+strconv.Itoa(cfg.Task.Index)] = true
	}
	for _, want := range []string{"chief-0", "worker-0", "worker-1", "ps-0"} {
		if !tasks[want] {
			t.Errorf("no replica had task %s; tasks %v\n%s", want, tasks, logs)
		}
	}
}

// TestOperatorJobConvertRoundTrips converts a PyTorchJob, checks what kiln
// validate says of the output, and runs the output in place of the job.
func TestOperatorJobConvertRoundTrips(t *testing.T) {
	dir := operatorDir(t)
	home := newHome(t)
	r := kiln(t, home, "convert", "-f", filepath.Join(dir, "pytorchjob.yaml"))
	if r.code != 0 || !strings.Contains(r.stdout, "kind: TrainJob") || !strings.Contains(r.stdout, "trainingOperator:") {
		t.Fatalf("kiln convert: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].image is ignored on the local backend") {
		t.Errorf("kiln convert does not warn of the ignored image:\n%s", r.stderr)
	}
	out := writeFile(t, dir, "converted.yaml", r.stdout)
	v := kiln(t, home, "validate", out)
	if v.code != 0 || !strings.Contains(v.stdout, "ok: "+out+": TrainJob/ddp-gloo (1 task)") {
		t.Fatalf("kiln validate of the converted job: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	if g := kiln(t, home, "get", "runtimes", filepath.Join(dir, "pytorchjob.yaml")); !regexp.MustCompile(`ddp-gloo-pytorchjob +TrainingRuntime .* torch +files: `).MatchString(g.stdout) {
		t.Errorf("kiln get runtimes does not list the PyTorchJob's runtime:\n%s%s", g.stdout, g.stderr)
	}
	j := kiln(t, home, "convert", "-o", "json", filepath.Join(dir, "mpijob.yaml"))
	var docs []struct{ Kind string }
	if err := json.Unmarshal([]byte(j.stdout), &docs); err != nil || len(docs) != 2 || docs[0].Kind != "TrainingRuntime" || docs[1].Kind != "TrainJob" {
		t.Errorf("kiln convert -o json: %v %+v\n%s", err, docs, j.stdout)
	}
	logs := runOperatorJob(t, dir, "converted.yaml")
	if strings.Count(logs, "all_reduce = 3") != 2 {
		t.Errorf("the converted job did not run as the PyTorchJob does:\n%s", logs)
	}
}

// TestOperatorJobErrorsNameTheJobsFields checks that kiln validate and kiln
// run report a training-operator job's problems by its own fields.
func TestOperatorJobErrorsNameTheJobsFields(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	bad := writeFile(t, t.TempDir(), "bad.yaml", `apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: bad}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - {name: tensorflow, command: [python3, t.py]}
    Evaluator:
      replicas: 1
      template:
        spec:
          containers:
          - {name: tensorflow, command: [python3, t.py]}
`)
	want := "KLN-1026 " + bad + ":12:5: TFJob/bad: spec.tfReplicaSpecs.Evaluator: Evaluator replicas are not run"
	for _, cmd := range []string{"validate", "run", "convert"} {
		r := kiln(t, home, cmd, bad)
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("kiln %s: exit %d, stderr %q; want 1 and %q", cmd, r.code, r.stderr, want)
		}
	}
	if got := runs(t, home); len(got) != 0 {
		t.Errorf("a refused job left %d runs", len(got))
	}
}

// TestOperatorJobThroughTheServer runs a JAXJob with --server: the server
// translates what the client sends, and records what it ignores.
func TestOperatorJobThroughTheServer(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	other := t.TempDir()
	r := kilnWithEnv(t, client, other, "run", "-q", filepath.Join(operatorDir(t), "jaxjob.yaml"))
	if r.code != 0 {
		id := runs(t, home)[0].ID
		t.Fatalf("remote run of a JAXJob: %d\n%s%s\n%s", r.code, r.stdout, r.stderr, kilnWithEnv(t, client, other, "logs", string(id)).stdout)
	}
	id := runs(t, home)[0].ID
	if logs := kilnWithEnv(t, client, other, "logs", string(id)).stdout; strings.Count(logs, "NUM_PROCESSES=2 PROCESS_ID=") != 2 {
		t.Errorf("remote logs of the JAXJob:\n%s", logs)
	}
	d := kilnWithEnv(t, client, other, "describe", "run", string(id)).stdout
	if !strings.Contains(d, "spec.jaxReplicaSpecs.Worker.template.spec.containers[0].image is ignored on the local backend") {
		t.Errorf("the run's events do not say the image is ignored:\n%s", d)
	}
}
