// Package training turns a TrainJob and its TrainingRuntime into the gang
// of processes a backend runs, in the shape of Kubeflow Trainer v2: the
// runtime's ML policy picks a framework plugin, the plugin fills in the
// processes and the exact rendezvous environment its framework expects,
// and the backend realizes them. Plugins never touch a backend: they see
// the hosts and ports the backend reserved, nothing else.
package training

import (
	"kiln.dev/kiln/internal/job"
)

// Plugin is one framework (torch, mpi, xgboost, tensorflow, jax, plain,
// paddle).
// Each lives in its own file and is listed once in Plugins.
type Plugin interface {
	// Name is the mlPolicy field that selects the plugin ("torch").
	Name() string
	// Reserved lists the environment variables the plugin sets; a user
	// may not set them.
	Reserved() []string
	// Ports is how many ports the job needs reserved.
	Ports(j *Job) int
	// Build fills in spec's processes (and files, and leader) for one
	// attempt. It is deterministic: the same input gives the same spec.
	Build(j *Job, in *Input, spec *job.Spec) error
}

// Input is what an attempt brings to Build.
type Input struct {
	// Command is the trainer's command and args, templates expanded; with
	// Entrypoint, its args alone, for the image's entrypoint.
	Command    []string
	Entrypoint bool
	// Replicas is what each training-operator replica type runs in place
	// of Command and Env (mlPolicy.trainingOperator.replicas); Finish
	// applies it.
	Replicas map[string]Replica
	// Env is every process's base environment (KEY=VALUE), user env included.
	Env []string
	// Network holds a host per replica and the reserved ports.
	Network job.Network
	// Dir is the attempt's directory, where Files are written.
	Dir string
	// Attempt is the attempt's ID; an elastic job names its rendezvous
	// after it.
	Attempt job.AttemptID
}

// Plugins returns one of each framework plugin. Adding a framework means a
// file in this package and one line here.
func Plugins() []Plugin {
	return []Plugin{torch{}, mpi{}, xgboost{}, tensorflow{}, jax{}, plain{}, paddle{}}
}

// pluginFor returns the plugin whose name is set in the policy's sources.
func pluginFor(names []string) (Plugin, bool) {
	if len(names) != 1 {
		return nil, false
	}
	for _, p := range Plugins() {
		if p.Name() == names[0] {
			return p, true
		}
	}
	return nil, false
}

// with returns env plus the given pairs.
func with(env []string, pairs ...string) []string {
	out := append([]string(nil), env...)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, pairs[i]+"="+pairs[i+1])
	}
	return out
}
