package training

import (
	"slices"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// The launcher keeps the workers' full DNS names and retries ssh while
// they start, as the MPI operator's launcher does; a user's own value of
// either stands, and appears once.
func TestMPILauncherEnv(t *testing.T) {
	t.Parallel()
	env := build(t, "mpi", apiv1.TrainTask{}).Processes[0].Env
	for _, kv := range []string{"OMPI_MCA_orte_keep_fqdn_hostnames=true", "OMPI_MCA_plm_rsh_args=" + SSHArgs} {
		if !slices.Contains(env, kv) {
			t.Errorf("launcher env %v lacks %s", env, kv)
		}
	}

	task := apiv1.TrainTask{Runtime: "mpi", Trainer: apiv1.Trainer{NumNodes: i32(2), Command: []string{"python3", "t.py"}}}
	j, problems := Merge(&task, NewRuntimes())
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	mine := []string{"OMPI_MCA_orte_keep_fqdn_hostnames=false", "OMPI_MCA_plm_rsh_args=-p 2222"}
	in := &Input{Command: task.Command, Env: mine, Dir: "/att", Network: job.Network{Hosts: []string{"h0", "h1"}}}
	spec := &job.Spec{}
	if err := j.Plugin.Build(j, in, spec); err != nil {
		t.Fatal(err)
	}
	for _, kv := range mine {
		name, _, _ := strings.Cut(kv, "=")
		var got []string
		for _, e := range spec.Processes[0].Env {
			if strings.HasPrefix(e, name+"=") {
				got = append(got, e)
			}
		}
		if !slices.Equal(got, []string{kv}) {
			t.Errorf("%s = %v, want only the user's %s", name, got, kv)
		}
	}
}
