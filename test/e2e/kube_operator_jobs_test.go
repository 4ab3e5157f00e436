package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKubePyTorchJobPodsCarryTheOperatorsEnv runs the PyTorchJob of
// testdata on the cluster and checks that its pods carry what
// training-operator's controller would put in them: the Master's address
// and port, the world size, each pod's rank, torchrun's PET_* variables.
func TestKubePyTorchJobPodsCarryTheOperatorsEnv(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	// kwok's pods run until deleted: look at them running, then cancel.
	cmd := startKiln(t, home, "run", filepath.Join(operatorDir(t), "pytorchjob.yaml"))
	id := newestRun(t, home)
	waitPods(t, c, id, 2)
	got := map[string]map[string]string{}
	for _, p := range c.pods(t, id) {
		for _, ct := range p.Spec.Containers {
			if ct.Image != "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727" {
				t.Errorf("container %s runs %q, not the PyTorchJob's image", ct.Name, ct.Image)
			}
			env := map[string]string{}
			for _, e := range ct.Env {
				if !strings.HasPrefix(e.Name, "KILN_") {
					env[e.Name] = e.Value
				}
			}
			got[ct.Name] = env
		}
	}
	master := got["master-0"]["MASTER_ADDR"]
	if !strings.HasPrefix(master, strings.ToLower(string(id))) {
		t.Errorf("MASTER_ADDR %q is not the Master pod's name", master)
	}
	node := func(rank string) map[string]string {
		return map[string]string{
			"PYTHONUNBUFFERED": "1", "MASTER_ADDR": master, "PET_MASTER_ADDR": master, "MASTER_PORT": "29500", "PET_MASTER_PORT": "29500",
			"WORLD_SIZE": "2", "RANK": rank, "PET_NODE_RANK": rank, "PET_NNODES": "2", "PET_NPROC_PER_NODE": "1",
		}
	}
	want := map[string]map[string]string{"master-0": node("0"), "worker-0": node("1")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the pods' env (-want +got):\n%s", diff)
	}
	if r := kiln(t, home, "cancel", string(id)); r.code != 0 {
		t.Fatalf("cancel: %s", r.stderr)
	}
	_ = cmd.Wait()
	waitCancelled(t, home, id)
}
