package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/local"
	"kiln.dev/kiln/internal/job"
)

const elasticJob = `apiVersion: kiln.dev/v1alpha1
kind: TrainingRuntime
metadata: {name: torch-elastic}
spec:
  mlPolicy:
    torch:
      numProcPerNode: 1
      elasticPolicy: {minNodes: 2, maxNodes: 3, maxRestarts: 3}
---
apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: elastic}
spec:
  runtimeRef: {name: torch-elastic}
  trainer:
    command: [torchrun, train.py]
    env:
    # Debian's torch 1.13 under Python 3.11 cannot parse torchrun's default
    # --redirects/--tee of "0"; a short last call closes a rendezvous
    # soon after minNodes agents joined it.
    - {name: PET_REDIRECTS, value: "1"}
    - {name: PET_TEE, value: "1"}
    - {name: PET_RDZV_CONF, value: "last_call_timeout=1"}
    resourcesPerNode: {cpu: 100m}
`

// TestElasticTorchOutlivesALostNode runs a 3-node elastic job (minNodes
// 2) with Debian's torchrun, kills one node's agent with its workers
// while it trains, and checks that the others met again without it and
// finished the job, and that the record names the node lost.
func TestElasticTorchOutlivesALostNode(t *testing.T) {
	env := frameworkEnv(t)
	home := newHome(t)
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("testdata", "elastic", "train.py"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "train.py", string(script))
	file := writeFile(t, dir, "job.yaml", elasticJob)
	cmd := exec.Command(kilnBin, "--home", home, "run", "-q", file)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id apiv1.RunID
	waitFor(t, "the job to start", func() bool {
		list := runs(t, home)
		if len(list) == 1 {
			id = list[0].ID
		}
		return id != ""
	})
	att := local.AttemptDir(home, job.AttemptID{Run: string(id), Node: "trainer", Number: 1})
	waitFor(t, "five steps of training in a world of 3", func() bool {
		b, _ := os.ReadFile(filepath.Join(att, "outputs", "step.txt"))
		n, _ := strconv.Atoi(string(b))
		return n >= 5
	})
	var launch struct{ PIDs []int }
	b, err := os.ReadFile(filepath.Join(att, "launch.json"))
	if err != nil || json.Unmarshal(b, &launch) != nil || len(launch.PIDs) != 3 {
		t.Fatalf("launch.json: %v %s", err, b)
	}
	if err := syscall.Kill(-launch.PIDs[2], syscall.SIGKILL); err != nil { // node-2's torchrun and its worker
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		logs := kilnWithEnv(t, env, home, "logs", string(id)).stdout
		t.Fatalf("kiln run: %v\n%s\n%s", err, kiln(t, home, "describe", "run", string(id)).stdout, logs)
	}

	world, _ := os.ReadFile(filepath.Join(att, "outputs", "world.txt"))
	if string(world) != "2" {
		t.Errorf("the script's final world size is %q, want 2", world)
	}
	r := kiln(t, home, "describe", "run", string(id), "-o", "json")
	var got struct {
		apiv1.Run
		Events []apiv1.Event `json:"events"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("describe -o json: %v\n%s", err, r.stdout)
	}
	n := got.Status.Nodes[0]
	if got.Status.Phase != apiv1.PhaseSucceeded || len(n.Attempts) != 1 {
		t.Fatalf("run is %s with %d attempts, want Succeeded in one", got.Status.Phase, len(n.Attempts))
	}
	if a := n.Attempts[0]; a.Nodes != 3 || len(a.Dropped) != 1 || a.Dropped[0] != "node-2" {
		t.Errorf("attempt started on %d nodes and dropped %v; want 3 and [node-2]", a.Nodes, a.Dropped)
	}
	lost := 0
	for _, e := range got.Events {
		if e.Reason == "HostLost" && strings.Contains(e.Message, "node-2 on host 2 was killed") {
			lost++
			if !e.Time.Before(*n.FinishedAt) {
				t.Errorf("the loss was recorded at %s, when the job ended, not while it ran on", e.Time)
			}
		}
	}
	if lost != 1 {
		t.Errorf("%d HostLost events name node-2, want 1: %+v", lost, got.Events)
	}
	text := kiln(t, home, "describe", "run", string(id)).stdout
	if !strings.Contains(text, "Nodes: 2 of 3 (lost node-2)") {
		t.Errorf("describe does not show the job's size:\n%s", text)
	}
	logs := kilnWithEnv(t, env, home, "logs", string(id)).stdout
	if strings.Count(logs, "done in world 2") != 2 {
		t.Errorf("want two ranks done in world 2:\n%s", logs)
	}
}

func TestElasticJobBadInputIsRejectedAtSubmit(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	write := func(name, policy, trainer string) string {
		return writeFile(t, dir, name, `apiVersion: kiln.dev/v1alpha1
kind: TrainingRuntime
metadata: {name: el}
spec:
  mlPolicy:
    torch: {elasticPolicy: `+policy+`}
---
apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: bad}
spec:
  runtimeRef: {name: el}
  trainer: `+trainer+`
`)
	}
	cases := map[string]struct{ file, want string }{
		"minNodes above maxNodes": {
			write("a.yaml", "{minNodes: 3, maxNodes: 2}", "{command: [torchrun, t.py]}"),
			"KLN-1041 " + dir + "/a.yaml: TrainingRuntime/el: spec.mlPolicy.torch.elasticPolicy.minNodes",
		},
		"a command that is not torchrun": {
			write("b.yaml", "{minNodes: 1, maxNodes: 2}", "{command: [python3, t.py]}"),
			"KLN-1042 " + dir + "/b.yaml: TrainJob/bad: spec.trainer.command",
		},
		"numNodes beside the elastic policy": {
			write("c.yaml", "{minNodes: 1, maxNodes: 2}", "{command: [torchrun, t.py], numNodes: 2}"),
			"KLN-1040 " + dir + "/c.yaml: TrainJob/bad: spec.trainer.numNodes",
		},
	}
	for name, tc := range cases {
		r := kiln(t, home, "run", tc.file)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", name, r.code, r.stderr, tc.want)
		}
	}
	if got := runs(t, home); len(got) != 0 {
		t.Errorf("rejected jobs left %d runs", len(got))
	}
}
