package slurm

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/slurmtest"
	"kiln.dev/kiln/internal/training"
)

// ddpScript is a two-rank data-parallel step with PyTorch's gloo backend:
// each rank adds its rank+1 into an all-reduce and writes what it saw.
const ddpScript = `import os, torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
e = os.environ
with open(os.path.join(e["KILN_OUTPUTS"], "rank-" + e["RANK"]), "w") as f:
    f.write("sum %g world %d master %s:%s" % (t.item(), dist.get_world_size(), e["MASTER_ADDR"], e["MASTER_PORT"]))
dist.destroy_process_group()
`

// TestTorchDDPTrainJobOnTwoNodes builds a 2-node TrainJob as every backend
// gets it (the training package's torch plugin, on this backend's
// network) and runs it: one Slurm job of two nodes, whose ranks meet at
// the allocation's first node and all-reduce for real.
func TestTorchDDPTrainJobOnTwoNodes(t *testing.T) {
	t.Parallel()
	if err := exec.Command("/usr/bin/python3", "-c", "import torch").Run(); err != nil {
		t.Fatalf("Debian's python3 lacks torch (make deps installs python3-torch): %v", err)
	}
	c := slurmtest.Connect(t)
	b := newBackend(t, c)
	id := job.AttemptID{Run: "slurm-ddp", Node: "train", Number: 1}
	nodes := int32(2)
	task := apiv1.TrainTask{Runtime: "torch-distributed"}
	task.NumNodes = &nodes
	task.Command = []string{"/usr/bin/python3", "-c", ddpScript}
	j, problems := training.Merge(&task, training.NewRuntimes())
	if len(problems) > 0 {
		t.Fatalf("Merge: %v", problems)
	}
	netw, err := b.Network(t.Context(), id, 2, j.Plugin.Ports(j))
	if err != nil {
		t.Fatal(err)
	}
	spec := &job.Spec{ID: id, Outputs: []string{"rank-0", "rank-1"}}
	in := &training.Input{
		Command: task.Command, Env: append(os.Environ(), "PATH=/usr/bin:"+os.Getenv("PATH")),
		Network: netw, Dir: b.attemptDir(id), Attempt: id,
	}
	if err := j.Plugin.Build(j, in, spec); err != nil {
		t.Fatal(err)
	}
	if len(spec.Processes) != 2 || spec.Processes[1].Host != 1 {
		t.Fatalf("the TrainJob's processes = %+v, want one rank on each of two hosts", spec.Processes)
	}
	launch(t, b, spec)
	st := waitState(t, b, spec, job.StateExited)
	if !st.Succeeded() {
		var logs strings.Builder
		_ = b.Logs(t.Context(), id, backendLogOptions(), &logs)
		t.Fatalf("the DDP job = %+v\n%s", st, logs.String())
	}
	want := fmt.Sprintf("sum 3 world 2 master 127.0.0.1:%d", netw.Ports[0])
	for _, rank := range []string{"rank-0", "rank-1"} {
		if st.Outputs[rank] != want {
			t.Errorf("%s saw %q, want %q", rank, st.Outputs[rank], want)
		}
	}
	rec, err := readRecord(b.attemptDir(id))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Command("scontrol", "show", "job", rec.jobID)
	if err != nil || !strings.Contains(out, "NumNodes=2 ") {
		t.Errorf("Slurm job %s of the TrainJob was not one job of two nodes: %v\n%s", rec.jobID, err, out)
	}
}

// TestGangRanksSeeTheAllocationsNodes checks the environment each rank of
// a 3-node gang sees: host tokens resolved to the nodes' addresses in
// every variable and file, and each rank on its own node.
func TestGangRanksSeeTheAllocationsNodes(t *testing.T) {
	t.Parallel()
	c := slurmtest.Connect(t)
	b := newBackend(t, c)
	id := job.AttemptID{Run: "slurm-env", Node: "gang", Number: 1}
	netw, err := b.Network(t.Context(), id, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := b.Network(t.Context(), id, 3, 1)
	if fmt.Sprint(again) != fmt.Sprint(netw) {
		t.Fatalf("Network gave %v, then %v; want the same answer", netw, again)
	}
	spec := &job.Spec{ID: id, Files: map[string]string{"hostfile": strings.Join(netw.Hosts, "\n") + "\n"}}
	for i := range 3 {
		env := append(os.Environ(), "MASTER_ADDR="+netw.Hosts[0], "MASTER_PORT="+strconv.Itoa(netw.Ports[0]),
			"PEERS="+strings.Join(netw.Hosts, ","), "RANK="+strconv.Itoa(i))
		// Each rank says what it was told, and its node.
		script := `printf '%s|%s|%s' "$MASTER_ADDR" "$PEERS" "$(cat hostfile | tr '\n' ' ')" > "$KILN_OUTPUTS/rank-$RANK"; ` +
			`echo "$SLURMD_NODENAME" > "$KILN_OUTPUTS/node-$RANK"`
		spec.Processes = append(spec.Processes, job.Process{Name: fmt.Sprintf("node-%d", i), Host: i, Command: []string{"sh", "-c", script}, Env: env})
		spec.Outputs = append(spec.Outputs, fmt.Sprintf("rank-%d", i), fmt.Sprintf("node-%d", i))
	}
	launch(t, b, spec)
	st := waitState(t, b, spec, job.StateExited)
	if !st.Succeeded() {
		t.Fatalf("the gang = %+v", st)
	}
	nodes := map[string]bool{}
	for i := range 3 {
		if got, want := st.Outputs[fmt.Sprintf("rank-%d", i)], "127.0.0.1|127.0.0.1,127.0.0.1,127.0.0.1|127.0.0.1 127.0.0.1 127.0.0.1 "; got != want {
			t.Errorf("rank %d saw %q, want %q", i, got, want)
		}
		nodes[st.Outputs[fmt.Sprintf("node-%d", i)]] = true
	}
	if len(nodes) != 3 {
		t.Errorf("the ranks ran on nodes %v, want three distinct ones", nodes)
	}
}

func backendLogOptions() backend.LogOptions { return backend.LogOptions{} }
