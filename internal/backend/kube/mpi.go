package kube

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"

	"kiln.dev/kiln/internal/job"
)

// MPI on Kubernetes, as the MPI operator (v2) runs it: the launcher runs
// mpirun, which reaches every other host of its hostfile over ssh and
// starts the ranks there through the sshd each worker pod runs. The
// launcher's pod is host 0 and holds the first slots itself (the
// operator's runLauncherAsWorker): mpirun forks the ranks of its own
// host. A Secret holds a key pair generated for the attempt, mounted at
// /root/.ssh in the launcher and every worker (the private key, the public
// key, and the public key again as authorized_keys). The hostfile names
// each host by its full DNS name, <pod>.<service>.<namespace>.svc
// slots=N, and the launcher keeps those names whole
// (OMPI_MCA_orte_keep_fqdn_hostnames) and retries ssh while workers start
// (OMPI_MCA_plm_rsh_args), both set by internal/training for every backend.
// The image must hold OpenMPI, an ssh client and sshd with its host keys,
// as the MPI operator's images do.
const (
	// HostfileName is the MPI hostfile among a spec's files.
	HostfileName = "hostfile"
	// SSHDir is where the attempt's ssh keys appear in MPI containers.
	SSHDir = "/root/.ssh"
	// sshPublicKey is the Secret's key for the public key; the private
	// key is corev1.SSHAuthPrivateKey, as in an ssh-auth Secret.
	sshPublicKey = "ssh-publickey"
)

// SSHDCommand is what an MPI worker runs: sshd in the foreground, logging
// to the pod log, as the MPI operator's workers do.
var SSHDCommand = []string{"/usr/sbin/sshd", "-De"}

// mpiGang returns spec as the cluster runs it when spec is an MPI job
// whose hostfile names hosts of this attempt where no process runs: with
// a worker process (sshd) on each such host and the hostfile naming hosts
// by their full DNS names. Any other spec is returned as it is. It is a
// pure function of spec and the namespace, so every engine and every
// restart reads the same gang.
func mpiGang(spec *job.Spec, ns string) *job.Spec {
	hf, ok := spec.Files[HostfileName]
	lead := slices.IndexFunc(spec.Processes, func(p job.Process) bool { return p.Name == spec.Leader })
	if !ok || lead < 0 || hasWorkers(spec) {
		return spec
	}
	file, named, ok := fqdnHostfile(names(spec.ID), hf, ns)
	if !ok {
		return spec // not this attempt's hosts: mpirun's own business
	}
	out := *spec
	out.Processes = slices.Clone(spec.Processes)
	for _, h := range named {
		if slices.ContainsFunc(spec.Processes, func(p job.Process) bool { return p.Host == h }) {
			continue
		}
		out.Processes = append(out.Processes, job.Process{
			Name: fmt.Sprintf("node-%d", h), Command: SSHDCommand, Env: spec.Processes[lead].Env, Host: h, Group: "node",
		})
	}
	if len(out.Processes) == len(spec.Processes) {
		return spec // every rank on the launcher's host: no ssh
	}
	out.Files = maps.Clone(spec.Files)
	out.Files[HostfileName] = file
	return &out
}

// fqdnHostfile rewrites a hostfile of this attempt's hosts, as Network
// names them (<pod>.<service>), to their full DNS names in namespace ns,
// keeping each line's slots, and returns the host indexes it names. It
// reports false when a line names another host.
func fqdnHostfile(a attempt, hf, ns string) (string, []int, bool) {
	var b strings.Builder
	var named []int
	for _, line := range strings.Split(strings.TrimSpace(hf), "\n") {
		host, slots, _ := strings.Cut(strings.TrimSpace(line), " ")
		pod, ok := strings.CutSuffix(host, "."+a.Base)
		n, ok2 := strings.CutPrefix(pod, a.Base+"-")
		h, err := strconv.Atoi(n)
		if !ok || !ok2 || err != nil || a.podName(h, true) != pod {
			return "", nil, false
		}
		named = append(named, h)
		fmt.Fprintf(&b, "%s.%s.svc %s\n", host, ns, strings.TrimSpace(slots))
	}
	return b.String(), named, true
}

// isWorker reports whether p is an MPI worker's sshd that mpiGang added.
func isWorker(p job.Process) bool { return slices.Equal(p.Command, SSHDCommand) }

// hasWorkers reports whether spec (as mpiGang returns it) has MPI workers,
// whose containers, and the launcher's, need the ssh keys.
func hasWorkers(spec *job.Spec) bool { return slices.ContainsFunc(spec.Processes, isWorker) }

// sshSecretName is the Secret holding an MPI attempt's ssh keys.
func sshSecretName(a attempt) string { return a.Base + "-ssh" }

// sshSecret generates a new key pair for an MPI attempt, as the MPI
// operator does (ECDSA P-521). It is not deterministic: Launch creates it
// only if it does not exist, so a repeated launch keeps the first keys.
func sshSecret(a attempt, sh shape) (*corev1.Secret, error) {
	key, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the ssh key of %s: %w", a.ID, err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding the ssh key of %s: %w", a.ID, err)
	}
	pub, err := ssh.NewPublicKey(&key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("encoding the ssh public key of %s: %w", a.ID, err)
	}
	return &corev1.Secret{
		ObjectMeta: meta(a, sshSecretName(a), sh),
		Type:       corev1.SecretTypeSSHAuth,
		Data: map[string][]byte{
			corev1.SSHAuthPrivateKey: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}),
			sshPublicKey:             ssh.MarshalAuthorizedKey(pub),
		},
	}, nil
}

// createSSHSecret creates the ssh keys of an MPI attempt with workers,
// unless they exist.
func (b *Backend) createSSHSecret(ctx context.Context, spec *job.Spec) error {
	if !hasWorkers(spec) {
		return nil
	}
	a := names(spec.ID)
	s, err := sshSecret(a, b.shape)
	if err != nil {
		return err
	}
	if err := b.core.create(ctx, "secrets", s); ignoreExists(err) != nil {
		return fmt.Errorf("creating secret %s: %w", s.Name, err)
	}
	return nil
}

// mountSSH mounts the attempt's ssh keys at SSHDir in every process
// container of an MPI pod, readable by their owner only, as ssh insists.
func mountSSH(p *corev1.Pod, a attempt, procs int) {
	mode := int32(0o600)
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "kiln-ssh", VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: sshSecretName(a), DefaultMode: &mode, Items: []corev1.KeyToPath{
			{Key: corev1.SSHAuthPrivateKey, Path: "id_rsa"},
			{Key: sshPublicKey, Path: "id_rsa.pub"},
			{Key: sshPublicKey, Path: "authorized_keys"},
		}},
	}})
	for i := range procs {
		c := &p.Spec.Containers[i]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "kiln-ssh", MountPath: SSHDir, ReadOnly: true})
	}
}
