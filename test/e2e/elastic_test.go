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

// elasticJob is a 3-node elastic job (minNodes 2) training for steps
// steps of 0.2s each.
func elasticJob(steps int) string {
	return `apiVersion: kiln.dev/v1alpha1
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
    - {name: STEPS, value: "` + strconv.Itoa(steps) + `"}
    resourcesPerNode: {cpu: 100m}
`
}

// blocker is a one-node job that takes one elastic node's room (100m)
// for seconds.
func blocker(seconds int) string {
	return blockerOf(`[sleep, "` + strconv.Itoa(seconds) + `"]`)
}

// blockerUntil is a blocker that ends when the file at path exists.
func blockerUntil(path string) string {
	return blockerOf(`[sh, -c, 'until [ -e ` + path + ` ]; do sleep 0.1; done']`)
}

func blockerOf(command string) string {
	return `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: blocker}
spec:
  runtimeRef: {name: plain}
  trainer: {command: ` + command + `, resourcesPerNode: {cpu: 100m}}
`
}

// elasticRun is an elastic job run by its own engine, of 0.3 CPUs: room
// for 3 of its nodes, shared with every other engine on home.
type elasticRun struct {
	t    *testing.T
	env  []string
	home string
	cmd  *exec.Cmd
	id   apiv1.RunID
	att  string // attempt 1's directory
}

func startElastic(t *testing.T, env []string, home, dir string, steps int) *elasticRun {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(repoRoot(), "examples", "training", "elastic.py"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "train.py", string(script))
	file := writeFile(t, dir, "job.yaml", elasticJob(steps))
	e := &elasticRun{t: t, env: env, home: home, cmd: exec.Command(kilnBin, "--home", home, "run", "-q", "--cpus", "0.3", file)}
	e.cmd.Env = env
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the elastic job to start", func() bool {
		for _, r := range runs(t, home) {
			if r.Name == "elastic" {
				e.id = r.ID
			}
		}
		return e.id != ""
	})
	e.att = local.AttemptDir(home, job.AttemptID{Run: string(e.id), Node: "trainer", Number: 1})
	return e
}

// step is the last step rank 0 checkpointed.
func (e *elasticRun) step() int {
	b, _ := os.ReadFile(filepath.Join(e.att, "outputs", "step.txt"))
	n, _ := strconv.Atoi(string(b))
	return n
}

// wait waits for the job to succeed and returns its record and events.
func (e *elasticRun) wait() (apiv1.Run, []apiv1.Event) {
	t := e.t
	t.Helper()
	if err := e.cmd.Wait(); err != nil {
		logs := kilnWithEnv(t, e.env, e.home, "logs", string(e.id)).stdout
		t.Fatalf("kiln run: %v\n%s\n%s", err, kiln(t, e.home, "describe", "run", string(e.id)).stdout, logs)
	}
	r := kiln(t, e.home, "describe", "run", string(e.id), "-o", "json")
	var got struct {
		apiv1.Run
		Events []apiv1.Event `json:"events"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("describe -o json: %v\n%s", err, r.stdout)
	}
	if got.Status.Phase != apiv1.PhaseSucceeded || len(got.Status.Nodes[0].Attempts) != 1 {
		t.Fatalf("run is %s with %d attempts, want Succeeded in one", got.Status.Phase, len(got.Status.Nodes[0].Attempts))
	}
	return got.Run, got.Events
}

// finalWorld is the world size the script trained its last step in.
func (e *elasticRun) finalWorld() string {
	b, _ := os.ReadFile(filepath.Join(e.att, "outputs", "world.txt"))
	return string(b)
}

// TestElasticTorchOutlivesALostNode runs a 3-node elastic job (minNodes
// 2) with Debian's torchrun, kills one node's agent with its workers
// while it trains, and checks that the others met again without it and
// finished the job, and that the record names the node lost. The lost
// node's room goes to a job that waited for it, so the elastic job does
// not grow back.
func TestElasticTorchOutlivesALostNode(t *testing.T) {
	env := frameworkEnv(t)
	home := newHome(t)
	dir := t.TempDir()
	e := startElastic(t, env, home, dir, 50)
	waitFor(t, "five steps of training in a world of 3", func() bool { return e.step() >= 5 })
	wait := exec.Command(kilnBin, "--home", home, "run", "-q", "--cpus", "0.3", writeFile(t, dir, "blocker.yaml", blocker(300)))
	if err := wait.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wait.Process.Kill(); _ = wait.Wait() })
	waitFor(t, "the other job to wait for room", func() bool { return nodePhase(t, home, "blocker") == apiv1.PhaseWaiting })
	pids, err := local.AttemptPIDs(home, string(e.id)+"/trainer/1")
	if err != nil || len(pids) != 3 {
		t.Fatalf("launch record: %v %v", pids, err)
	}
	if err := syscall.Kill(-pids[2], syscall.SIGKILL); err != nil { // node-2's torchrun and its worker
		t.Fatal(err)
	}
	run, events := e.wait()

	if w := e.finalWorld(); w != "2" {
		t.Errorf("the script's final world size is %q, want 2", w)
	}
	n := run.Status.Nodes[0]
	if a := n.Attempts[0]; a.Nodes != 3 || a.Joined != 0 || len(a.Dropped) != 1 || a.Dropped[0] != "node-2" {
		t.Errorf("attempt started on %d nodes, %d joined, dropped %v; want 3, 0 and [node-2]", a.Nodes, a.Joined, a.Dropped)
	}
	lost := 0
	for _, ev := range events {
		if ev.Reason == "HostLost" && strings.Contains(ev.Message, "node-2 on host 2 was killed") {
			lost++
			if !ev.Time.Before(*n.FinishedAt) {
				t.Errorf("the loss was recorded at %s, when the job ended, not while it ran on", ev.Time)
			}
		}
	}
	if lost != 1 {
		t.Errorf("%d HostLost events name node-2, want 1: %+v", lost, events)
	}
	if text := kiln(t, home, "describe", "run", string(e.id)).stdout; !strings.Contains(text, "Nodes: 2 now (started on 3; lost node-2)") {
		t.Errorf("describe does not show the job's size:\n%s", text)
	}
	if logs := kilnWithEnv(t, env, home, "logs", string(e.id)).stdout; strings.Count(logs, "done in world 2") != 2 {
		t.Errorf("want two ranks done in world 2:\n%s", logs)
	}
	if got := describeByName(t, home, "blocker"); got != apiv1.PhaseRunning {
		t.Errorf("the job that waited is %s, want Running in the lost node's room", got)
	}
}

// TestElasticTorchGrowsWhenRoomComesBack starts a 3-node elastic job
// (minNodes 2) while another job holds one node's room: it starts on 2,
// and when that job ends, a third agent joins the running job through the
// rendezvous and it finishes on 3.
func TestElasticTorchGrowsWhenRoomComesBack(t *testing.T) {
	env := frameworkEnv(t)
	home := newHome(t)
	dir := t.TempDir()
	release := filepath.Join(dir, "release")
	hold := exec.Command(kilnBin, "--home", home, "run", "-q", "--cpus", "0.3", writeFile(t, dir, "blocker.yaml", blockerUntil(release)))
	if err := hold.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the blocker to run", func() bool { return describeByName(t, home, "blocker") == apiv1.PhaseRunning })
	e := startElastic(t, env, home, dir, 100)
	// Steps taken while the blocker holds a node's room are taken in a
	// world of 2: only then does the room come back.
	waitFor(t, "two steps of training in a world of 2", func() bool { return e.step() >= 2 })
	writeFile(t, dir, "release", "")
	if err := hold.Wait(); err != nil {
		t.Fatalf("blocker: %v", err)
	}
	run, events := e.wait()

	if w := e.finalWorld(); w != "3" {
		t.Errorf("the script's final world size is %q, want 3", w)
	}
	if a := run.Status.Nodes[0].Attempts[0]; a.Nodes != 2 || a.Joined != 1 || len(a.Dropped) != 0 {
		t.Errorf("attempt started on %d nodes, %d joined, dropped %v; want 2, 1 and none", a.Nodes, a.Joined, a.Dropped)
	}
	joined := 0
	for _, ev := range events {
		if ev.Reason == "HostJoined" && strings.Contains(ev.Message, "host 2 joined") {
			joined++
		}
	}
	if joined != 1 {
		t.Errorf("%d HostJoined events name host 2, want 1: %+v", joined, events)
	}
	logs := kilnWithEnv(t, env, home, "logs", string(e.id)).stdout
	if !strings.Contains(logs, "world 2 restart 0 from step 0 (KILN_NODES=2)") || !strings.Contains(logs, "(KILN_NODES=3)") ||
		strings.Count(logs, "done in world 3") != 3 {
		t.Errorf("want the job to start in a world of 2 of the 2 nodes admitted, a third to join, and three ranks done in world 3:\n%s", logs)
	}
	if text := kiln(t, home, "describe", "run", string(e.id)).stdout; !strings.Contains(text, "Nodes: 3 now (started on 2; 1 joined)") {
		t.Errorf("describe does not show the job's size:\n%s", text)
	}
}

// nodePhase is the phase of the task of the named job on home, or "".
func nodePhase(t *testing.T, home, name string) apiv1.Phase {
	t.Helper()
	for _, r := range runs(t, home) {
		if r.Name == name {
			if nodes := describe(t, home, r.ID).Status.Nodes; len(nodes) > 0 {
				return nodes[0].Phase
			}
		}
	}
	return ""
}

// describeByName is the phase of the run of the named job on home, or "".
func describeByName(t *testing.T, home, name string) apiv1.Phase {
	t.Helper()
	for _, r := range runs(t, home) {
		if r.Name == name {
			return describe(t, home, r.ID).Status.Phase
		}
	}
	return ""
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
			"KLN-1041 " + dir + "/a.yaml:6:29: TrainingRuntime/el: spec.mlPolicy.torch.elasticPolicy.minNodes",
		},
		"a command that is not torchrun": {
			write("b.yaml", "{minNodes: 1, maxNodes: 2}", "{command: [python3, t.py]}"),
			"KLN-1042 " + dir + "/b.yaml:13:13: TrainJob/bad: spec.trainer.command",
		},
		"numNodes beside the elastic policy": {
			write("c.yaml", "{minNodes: 1, maxNodes: 2}", "{command: [torchrun, t.py], numNodes: 2}"),
			"KLN-1040 " + dir + "/c.yaml:13:40: TrainJob/bad: spec.trainer.numNodes",
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
