package training

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"kiln.dev/kiln/internal/job"
)

// mpi runs an OpenMPI job: a launcher process runs mpirun, which starts
// numNodes x numProcPerNode ranks on the hosts of a hostfile. Only the
// launcher's exit decides the job. On one machine mpirun forks every rank
// itself, without ssh.
type mpi struct{}

func (mpi) Name() string { return "mpi" }

func (mpi) Reserved() []string {
	return []string{"OMPI_MCA_orte_default_hostfile", "OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"}
}

func (mpi) Ports(*Job) int { return 0 }

func (mpi) Build(j *Job, in *Input, spec *job.Spec) error {
	total := j.NumNodes * j.NumProcPerNode
	spec.Files = map[string]string{"hostfile": hostfile(in.Network.Hosts[:j.NumNodes], j.NumProcPerNode)}
	env := with(in.Env, "OMPI_MCA_orte_default_hostfile", filepath.Join(in.Dir, "hostfile"),
		"OMPI_ALLOW_RUN_AS_ROOT", "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
	// As the MPI operator sets them for its launcher: host names stay
	// whole (a worker is <pod>.<service>.<namespace>.svc, which its short
	// name does not resolve to), and ssh retries while the workers' sshd
	// start. Nothing uses them when every rank is on this machine. A value
	// the user sets stands.
	env = withDefault(env, "OMPI_MCA_orte_keep_fqdn_hostnames", "true")
	env = withDefault(env, "OMPI_MCA_plm_rsh_args", SSHArgs)
	cmd := hostfileArgs(in.Command, filepath.Join(in.Dir, "hostfile"))
	if base := filepath.Base(cmd[0]); base != "mpirun" && base != "mpiexec" {
		cmd = append([]string{"mpirun", "-np", strconv.Itoa(total)}, cmd...)
	}
	spec.Processes = []job.Process{{Name: "launcher", Command: cmd, Env: env}}
	spec.Leader = "launcher"
	return nil
}

// MPIHostfile is where the MPI operator and Trainer v2 mount an MPI job's
// hostfile, and where their users' commands name it
// (mpirun --hostfile /etc/mpi/hostfile).
const MPIHostfile = "/etc/mpi/hostfile"

// hostfileArgs returns cmd with MPIHostfile, wherever an argument names
// it (--hostfile /etc/mpi/hostfile, --hostfile=/etc/mpi/hostfile, a
// shell's script), replaced by the attempt's hostfile at path: on this
// machine /etc/mpi holds none. A container backend mounts it at both.
func hostfileArgs(cmd []string, path string) []string {
	out := make([]string, len(cmd))
	for i, a := range cmd {
		out[i] = strings.ReplaceAll(a, MPIHostfile, path)
	}
	return out
}

// SSHArgs are the ssh options mpirun reaches workers with: retry while a
// worker's sshd starts (the MPI operator's ConnectionAttempts=10), and
// accept the host key a worker generated when it started, which no
// launcher can know in advance (the MPI operator's images set the same in
// their ssh_config). The launcher still proves itself with the job's key.
const SSHArgs = "-o ConnectionAttempts=10 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"

// hostfile lists each host with its slots. Nodes that share a host (all
// of them, on one machine) share one line: OpenMPI refuses a host listed twice.
func hostfile(hosts []string, slots int) string {
	var order []string
	count := map[string]int{}
	for _, h := range hosts {
		if count[h] == 0 {
			order = append(order, h)
		}
		count[h] += slots
	}
	var b strings.Builder
	for _, h := range order {
		fmt.Fprintf(&b, "%s slots=%d\n", h, count[h])
	}
	return b.String()
}
