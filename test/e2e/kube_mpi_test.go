package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const mpiTrainJob = `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata:
  name: allreduce
spec:
  runtimeRef: {name: mpi}
  trainer:
    image: ghcr.io/example/mpi:1.0
    numNodes: 3
    numProcPerNode: 2
    command: [python3, /app/allreduce.py]
    resourcesPerNode: {cpu: "1", memory: 1Gi}
`

// An MPI TrainJob on the cluster is the MPI operator's shape: a launcher
// and a worker per other node running sshd, all holding the job's ssh
// keys, and a hostfile of the workers' full DNS names with their slots.
func TestKubeMPITrainJobReachesItsWorkers(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	cmd := startKiln(t, home, "run", writeFile(t, t.TempDir(), "mpi.yaml", mpiTrainJob))
	id := newestRun(t, home)
	waitPods(t, c, id, 3)
	ctx := context.Background()
	base := string(id) + "-trainer-1"

	hf, err := c.cs.CoreV1().ConfigMaps(c.ns).Get(ctx, base+"-files", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for i := range 3 {
		want += fmt.Sprintf("%s-%d.%s.%s.svc slots=2\n", base, i, base, c.ns)
	}
	if hf.Data["hostfile"] != want {
		t.Errorf("hostfile =\n%s\nwant\n%s", hf.Data["hostfile"], want)
	}
	sec, err := c.cs.CoreV1().Secrets(c.ns).Get(ctx, base+"-ssh", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Type != corev1.SecretTypeSSHAuth || !strings.Contains(string(sec.Data["ssh-privatekey"]), "PRIVATE KEY") ||
		!strings.HasPrefix(string(sec.Data["ssh-publickey"]), "ecdsa-sha2-nistp521 ") {
		t.Errorf("secret %s of type %s holds no key pair", sec.Name, sec.Type)
	}

	pods := c.pods(t, id)
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	launcher := pods[0].Spec.Containers[0]
	env := map[string]string{}
	for _, e := range launcher.Env {
		env[e.Name] = e.Value
	}
	wantEnv := map[string]string{
		"OMPI_MCA_orte_keep_fqdn_hostnames": "true",
		"OMPI_MCA_plm_rsh_args":             "-o ConnectionAttempts=10 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
		"OMPI_MCA_orte_default_hostfile":    "/kiln/hostfile",
		"PYTHONUNBUFFERED":                  "1",
	}
	for k, v := range wantEnv {
		if env[k] != v {
			t.Errorf("launcher %s=%q, want %q", k, env[k], v)
		}
	}
	if want := []string{"mpirun", "-np", "6", "python3", "/app/allreduce.py"}; launcher.Name != "launcher" || !slices.Equal(launcher.Command, want) {
		t.Errorf("pod %s runs %s %v, want the launcher running %v", pods[0].Name, launcher.Name, launcher.Command, want)
	}
	for i, p := range pods {
		ct := p.Spec.Containers[0]
		mounts := map[string]string{}
		for _, m := range ct.VolumeMounts {
			mounts[m.MountPath] = m.Name
		}
		if mounts["/root/.ssh"] == "" {
			t.Errorf("pod %s does not mount the ssh keys", p.Name)
		}
		if i > 0 && (ct.Name != fmt.Sprintf("node-%d", i) || !slices.Equal(ct.Command, []string{"/usr/sbin/sshd", "-De"})) {
			t.Errorf("worker pod %s runs %s %v, want node-%d running sshd -De", p.Name, ct.Name, ct.Command, i)
		}
		if p.Spec.Hostname != fmt.Sprintf("%s-%d", base, i) || p.Spec.Subdomain != base {
			t.Errorf("pod %s is %s.%s, want its hostfile name", p.Name, p.Spec.Hostname, p.Spec.Subdomain)
		}
	}

	if r := kiln(t, home, "cancel", string(id)); r.code != 0 {
		t.Fatalf("cancel: %s", r.stderr)
	}
	_ = cmd.Wait()
	waitCancelled(t, home, id)
}
