package node

import (
	"context"
	"encoding/json"
	"errors"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/workflow"
)

// Prepare does for attempt a what every kind's attempt needs: it expands
// the templates of command and of the task's image, builds the environment from vars, and fills in
// the spec's attempt-level fields (ID, outputs, working directory,
// container). Handlers call it from Build with their own command and
// variables. The error joins every problem found.
func Prepare(ctx context.Context, a *Attempt, command []string, vars []apiv1.EnvVar, spec *job.Spec) (cmd, env []string, err error) {
	var errs []error
	expand := func(s string) string {
		v, err := a.Inputs.Expand(s)
		errs = append(errs, err)
		return v
	}
	for _, s := range command {
		cmd = append(cmd, expand(s))
	}
	t := a.Task
	spec.ID = a.ID
	spec.Outputs = t.Spec.Outputs.Params()
	spec.Artifacts = artifactPaths(t.Spec.Outputs)
	spec.Container = container(t)
	spec.Container.Image = expand(t.Image) // a map's items may pick the image
	spec.Container.WorkingDir = expand(t.Spec.WorkingDir)
	spec.WorkingDir = a.Inputs.WorkingDir(spec.Container.WorkingDir)
	env, spec.SecretEnv, err = a.Inputs.Env(ctx, vars)
	return cmd, env, errors.Join(append(errs, err)...)
}

func artifactPaths(o *apiv1.Outputs) []string {
	if o == nil {
		return nil
	}
	out := make([]string, len(o.Artifacts))
	for i, a := range o.Artifacts {
		out[i] = a.Path
	}
	return out
}

// container is what a container backend needs to run task t: its image,
// what each of its pods asks for, its pod template, and how long its pods
// may wait for a node.
func container(t *workflow.Task) job.Container {
	c := job.Container{
		Image: t.Image, ScheduleTimeout: t.AdmissionTimeout, TimeLimit: t.Timeout,
		MilliCPU: t.PerHost.MilliCPU, Memory: t.PerHost.Memory, GPU: t.PerHost.GPU,
	}
	if t.PodTemplate != nil {
		// A template decoded from JSON always encodes again.
		c.PodTemplate, _ = json.Marshal(t.PodTemplate)
		c.Queue = t.PodTemplate.Metadata.Labels[apiv1.LabelKueueQueue]
	}
	return c
}
