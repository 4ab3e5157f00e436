package kube

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"kiln.dev/kiln/internal/job"
)

// mpiSpec is what internal/training's mpi plugin builds for nodes hosts
// of slots each on this backend's network: the launcher on host 0 and a
// hostfile naming every host.
func mpiSpec(id string, nodes, slots int) *job.Spec {
	spec := withAnnotations(&job.Spec{ID: mustID(id), Leader: "launcher", Files: map[string]string{}}, nil)
	a := names(spec.ID)
	hf := ""
	for h := range nodes {
		hf += a.podName(h, true) + "." + a.Base + " slots=" + string(rune('0'+slots)) + "\n"
	}
	spec.Files[HostfileName] = hf
	spec.Processes = []job.Process{{
		Name: "launcher", Group: "launcher", Command: []string{"mpirun", "python3", "t.py"},
		Env: []string{"OMPI_MCA_orte_default_hostfile=/kiln/hostfile", "A=1"},
	}}
	return spec
}

func TestMPIGang(t *testing.T) {
	t.Parallel()
	three := mpiSpec("r-mpiaa/trainer/1", 3, 2)
	got := mpiGang(three, "ns1")
	b := names(three.ID).Base
	wantFile := b + "-0." + b + ".ns1.svc slots=2\n" + b + "-1." + b + ".ns1.svc slots=2\n" + b + "-2." + b + ".ns1.svc slots=2\n"
	if diff := cmp.Diff(wantFile, got.Files[HostfileName]); diff != "" {
		t.Errorf("hostfile (-want +got):\n%s", diff)
	}
	wantProcs := []job.Process{
		three.Processes[0],
		{Name: "node-1", Command: SSHDCommand, Env: three.Processes[0].Env, Host: 1, Group: "node"},
		{Name: "node-2", Command: SSHDCommand, Env: three.Processes[0].Env, Host: 2, Group: "node"},
	}
	if diff := cmp.Diff(wantProcs, got.Processes); diff != "" {
		t.Errorf("processes (-want +got):\n%s", diff)
	}
	if three.Files[HostfileName] == got.Files[HostfileName] || len(three.Processes) != 1 {
		t.Error("mpiGang changed the engine's spec instead of a copy")
	}
	if again := mpiGang(got, "ns1"); !cmp.Equal(again, got) {
		t.Error("mpiGang of its own result changed it again")
	}
	if diff := cmp.Diff(got, mpiGang(mpiSpec("r-mpiaa/trainer/1", 3, 2), "ns1")); diff != "" {
		t.Errorf("mpiGang is not deterministic:\n%s", diff)
	}

	for name, spec := range map[string]*job.Spec{
		"one node: mpirun forks every rank": mpiSpec("r-mpiaa/trainer/1", 1, 4),
		"not MPI":                           staticGang("r-mpiaa/trainer/1", 2),
		"a hostfile of other hosts": func() *job.Spec {
			s := mpiSpec("r-mpiaa/trainer/1", 2, 1)
			s.Files[HostfileName] = "elsewhere slots=1\n"
			return s
		}(),
	} {
		if got := mpiGang(spec, "ns1"); got != spec {
			t.Errorf("%s: mpiGang changed the spec: %+v", name, got.Processes)
		}
	}
}

func TestMPIObjects(t *testing.T) {
	t.Parallel()
	spec := mpiGang(mpiSpec("r-mpiaa/trainer/1", 2, 1), "ns1")
	objs, err := build(spec, shape{Namespace: "ns1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.Pods) != 2 || objs.Service == nil {
		t.Fatalf("%d pods and service %v, want a launcher's and a worker's pod behind a service", len(objs.Pods), objs.Service)
	}
	for _, p := range objs.Pods {
		checkSSHMount(t, p, names(spec.ID))
	}
	if got := objs.Pods[1].Spec.Containers[0].Command; !slices.Equal(got, SSHDCommand) {
		t.Errorf("the worker runs %v, want sshd", got)
	}
	// Without workers nothing of ssh is added.
	single, err := build(mpiGang(mpiSpec("r-mpiaa/trainer/1", 1, 2), "ns1"), shape{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(single.Pods[0].Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "kiln-ssh" }) {
		t.Error("a one-node MPI job mounts ssh keys it has no use for")
	}
}

// checkSSHMount checks that pod mounts its attempt's ssh keys, owner-only,
// in its process container.
func checkSSHMount(t *testing.T, p *corev1.Pod, a attempt) {
	t.Helper()
	i := slices.IndexFunc(p.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "kiln-ssh" })
	if i < 0 || p.Spec.Volumes[i].Secret == nil {
		t.Fatalf("pod %s has no ssh volume", p.Name)
	}
	s := p.Spec.Volumes[i].Secret
	paths := []string{}
	for _, it := range s.Items {
		paths = append(paths, it.Key+"->"+it.Path)
	}
	want := []string{"ssh-privatekey->id_rsa", "ssh-publickey->id_rsa.pub", "ssh-publickey->authorized_keys"}
	if s.SecretName != sshSecretName(a) || s.DefaultMode == nil || *s.DefaultMode != 0o600 || !slices.Equal(paths, want) {
		t.Errorf("pod %s ssh volume = %s mode %v items %v, want %s 0600 %v", p.Name, s.SecretName, s.DefaultMode, paths, sshSecretName(a), want)
	}
	if !slices.ContainsFunc(p.Spec.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "kiln-ssh" && m.MountPath == SSHDir }) {
		t.Errorf("pod %s container %s does not mount the keys at %s", p.Name, p.Spec.Containers[0].Name, SSHDir)
	}
}
