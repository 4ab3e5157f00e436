package training

import (
	"fmt"

	"kiln.dev/kiln/internal/job"
)

// plain runs numNodes copies of the command with no framework environment:
// the gang starts and ends together, nothing more.
type plain struct{}

func (plain) Name() string { return "plain" }

func (plain) Reserved() []string { return nil }

func (plain) Ports(*Job) int { return 0 }

func (plain) Build(j *Job, in *Input, spec *job.Spec) error {
	for i := range j.NumNodes {
		spec.Processes = append(spec.Processes, job.Process{Name: fmt.Sprintf("node-%d", i), Command: in.Command, Env: in.Env, Host: i})
	}
	return nil
}
