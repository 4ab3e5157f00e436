package e2e

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
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

// TestKubeOperatorExamplesRunTheirEntrypoints runs examples of
// training-operator v1.9.0 in their shape on the cluster, as the local
// backend cannot: containers without a command run their image's
// entrypoint with each replica type's own args; a PaddleJob's pods get the
// operator's collective-mode variables; an MPIJob's pods have the
// hostfile at /etc/mpi/hostfile.
func TestKubeOperatorExamplesRunTheirEntrypoints(t *testing.T) {
	c := newCluster(t)
	dir := operatorDir(t)
	type cmdArgs struct{ Command, Args []string }
	masterArgs := []string{"--job_type=Train", "--xgboost_parameter=objective:multi:softprob,num_class:3", "--n_estimators=10", "--model_path=/tmp/xgboost-model", "--model_storage_type=local"}
	workerArgs := []string{"--job_type=Train", `--xgboost_parameter="objective:multi:softprob,num_class:3"`, "--n_estimators=10"}
	cases := []struct {
		file  string
		pods  int
		check func(t *testing.T, pods []corev1.Pod)
	}{
		{"ex-xgboostjob.yaml", 3, func(t *testing.T, pods []corev1.Pod) {
			got := map[string]cmdArgs{}
			for _, p := range pods {
				ct := p.Spec.Containers[0]
				got[ct.Name] = cmdArgs{ct.Command, ct.Args}
			}
			want := map[string]cmdArgs{"master-0": {nil, masterArgs}, "worker-0": {nil, workerArgs}, "worker-1": {nil, workerArgs}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("containers' command and args (-want +got):\n%s", diff)
			}
		}},
		{"ex-tf-dist-mnist.yaml", 4, func(t *testing.T, pods []corev1.Pod) {
			for _, p := range pods {
				ct := p.Spec.Containers[0]
				if ct.Command != nil || ct.Args != nil || ct.Image != "kubeflow/tf-dist-mnist-test:latest" || !hasEnv(ct, "TF_CONFIG") {
					t.Errorf("container %s: command %q args %q image %s, want the image's entrypoint with TF_CONFIG", ct.Name, ct.Command, ct.Args, ct.Image)
				}
			}
		}},
		{"ex-paddle-simple-cpu.yaml", 2, func(t *testing.T, pods []corev1.Pod) {
			first := ""
			for _, p := range pods {
				if p.Spec.Containers[0].Name == "worker-0" {
					first = p.Name
				}
			}
			for _, p := range pods {
				ct := p.Spec.Containers[0]
				env := envMap(ct)
				if env["PADDLE_NNODES"] != "2" || first == "" || !strings.HasPrefix(env["PADDLE_MASTER"], first+".") || env["PADDLE_JOB_ID"] == "" ||
					!slices.Equal(ct.Command, []string{"python3", "-m", "paddle.distributed.launch", "run_check"}) {
					t.Errorf("container %s: command %q env %v, want python3 -m paddle.distributed.launch run_check with worker 0's pod (%s) as PADDLE_MASTER", ct.Name, ct.Command, env, first)
				}
			}
		}},
		{"mpijob-hostfile.yaml", 2, func(t *testing.T, pods []corev1.Pod) {
			for _, p := range pods {
				if !slices.ContainsFunc(p.Spec.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/etc/mpi/hostfile" }) {
					t.Errorf("pod %s does not mount the hostfile at /etc/mpi/hostfile", p.Name)
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			home := c.home(t)
			cmd := startKiln(t, home, "run", filepath.Join(dir, tc.file))
			id := newestRun(t, home)
			waitPods(t, c, id, tc.pods)
			tc.check(t, c.pods(t, id))
			if r := kiln(t, home, "cancel", string(id)); r.code != 0 {
				t.Fatalf("cancel: %s", r.stderr)
			}
			_ = cmd.Wait()
			waitCancelled(t, home, id)
		})
	}
}

func envMap(ct corev1.Container) map[string]string {
	out := map[string]string{}
	for _, e := range ct.Env {
		out[e.Name] = e.Value
	}
	return out
}

func hasEnv(ct corev1.Container, name string) bool {
	_, ok := envMap(ct)[name]
	return ok
}
