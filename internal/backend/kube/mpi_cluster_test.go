package kube

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An MPI job of three nodes on the cluster: the launcher's pod and two
// workers running sshd, all with the attempt's keys, a hostfile of full
// DNS names, and only the launcher's end deciding.
func TestMPIWorkersOnTheCluster(t *testing.T) {
	h := newHarness(t, Config{})
	ctx := t.Context()
	spec := mpiSpec("r-mpicl/trainer/1", 3, 2)
	if err := h.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	a := names(spec.ID)
	var pods []corev1.Pod
	eventually(t, "the launcher's and both workers' pods to run", func() bool {
		pods = h.pods(t, spec.ID)
		return len(pods) == 3 && !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Status.Phase != corev1.PodRunning })
	})
	slices.SortFunc(pods, func(x, y corev1.Pod) int { return strings.Compare(x.Name, y.Name) })

	sec, err := h.c.Client.CoreV1().Secrets(h.ns).Get(ctx, sshSecretName(a), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.ParsePrivateKey(sec.Data[corev1.SSHAuthPrivateKey])
	if err != nil {
		t.Fatalf("the secret's private key: %v", err)
	}
	if sec.Type != corev1.SecretTypeSSHAuth || !bytes.Equal(ssh.MarshalAuthorizedKey(key.PublicKey()), sec.Data[sshPublicKey]) {
		t.Errorf("secret %s (%s) does not pair its public key with its private key", sec.Name, sec.Type)
	}
	files, err := h.c.Client.CoreV1().ConfigMaps(h.ns).Get(ctx, a.Base+"-files", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for i := range 3 {
		want += a.podName(i, true) + "." + a.Base + "." + h.ns + ".svc slots=2\n"
	}
	if files.Data[HostfileName] != want {
		t.Errorf("hostfile =\n%s\nwant\n%s", files.Data[HostfileName], want)
	}
	for i, p := range pods {
		checkSSHMount(t, &p, a)
		c := p.Spec.Containers[0]
		wantName, wantCmd := "node-"+string(rune('0'+i)), SSHDCommand
		if i == 0 {
			wantName, wantCmd = "launcher", spec.Processes[0].Command
		}
		if c.Name != wantName || !slices.Equal(c.Command, wantCmd) || p.Spec.Hostname != a.podName(i, true) || p.Spec.Subdomain != a.Base {
			t.Errorf("pod %s runs %s %v as %s.%s, want %s %v as %s.%s", p.Name, c.Name, c.Command, p.Spec.Hostname, p.Spec.Subdomain,
				wantName, wantCmd, a.podName(i, true), a.Base)
		}
		if env := envOf(&p); env["OMPI_MCA_orte_default_hostfile"] != "/kiln/hostfile" {
			t.Errorf("pod %s: hostfile variable %q", p.Name, env["OMPI_MCA_orte_default_hostfile"])
		}
	}
	if _, err := h.c.Client.CoreV1().Services(h.ns).Get(ctx, a.Base, metav1.GetOptions{}); err != nil {
		t.Errorf("no Service names the workers: %v", err)
	}

	// Only the launcher decides: it succeeds, the workers are stopped.
	endPod(t, h, pods[0], corev1.PodSucceeded, 0)
	st := h.wait(t, spec.ID)
	if !st.Succeeded() || !slices.Equal(st.StoppedProcesses, []string{"node-1", "node-2"}) {
		t.Errorf("got %+v, want success with the workers stopped", st)
	}
	eventually(t, "the workers' pods to be deleted", func() bool { return len(h.pods(t, spec.ID)) == 1 })
	if again, err := h.Observe(ctx, spec); err != nil || again.Succeeded() != st.Succeeded() || len(again.Processes) != 3 {
		t.Errorf("Observe with the engine's own spec = %+v, %v; want the recorded success of all three", again, err)
	}
}
