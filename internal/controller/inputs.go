package controller

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/template"
)

// inputs resolves, for one attempt of one node, what it reads from its
// run: parameters, upstream outputs, its own names and directories, and
// secrets. It is the engine's side of node.Inputs.
type inputs struct {
	c  *Controller
	rs *runState
	i  int
	id job.AttemptID
}

var _ node.Inputs = (*inputs)(nil)

func (c *Controller) inputs(rs *runState, i int, id job.AttemptID) *inputs {
	return &inputs{c: c, rs: rs, i: i, id: id}
}

// Expand implements node.Inputs.
func (in *inputs) Expand(s string) (string, error) { return template.Expand(s, in.lookup) }

// Env implements node.Inputs. A secret's value goes into the process's
// environment only; nothing kiln writes holds it.
func (in *inputs) Env(ctx context.Context, vars []apiv1.EnvVar) (env, secrets []string, err error) {
	env = append([]string(nil), in.c.cfg.Env...)
	var errs []error
	for _, e := range vars {
		v, err := in.value(ctx, e)
		errs = append(errs, err)
		env = append(env, e.Name+"="+v)
		if e.ValueFrom != nil {
			secrets = append(secrets, e.Name)
		}
	}
	env = append(env, "KILN_RUN_ID="+in.id.Run, "KILN_TASK="+in.id.Node, "KILN_ATTEMPT="+strconv.Itoa(in.id.Number))
	return env, secrets, errors.Join(errs...)
}

// WorkingDir implements node.Inputs: a relative directory, and the
// default, are relative to the run's working directory (the directory of
// its workflow file, when the engine can see it); without one, attempts
// start in their own directory.
func (in *inputs) WorkingDir(wd string) string {
	base := in.rs.run.WorkDir
	switch {
	case wd == "":
		return base
	case filepath.IsAbs(wd) || base == "":
		return wd
	}
	return filepath.Join(base, wd)
}

// lookup gives the value of one template reference.
func (in *inputs) lookup(ref template.Ref) (string, bool) {
	p, rs := ref.Path, in.rs
	switch {
	case len(p) == 2 && p[0] == "params":
		v, ok := rs.run.Params[p[1]]
		return v, ok
	case ref.Raw == "outputs.dir":
		return in.c.cfg.Backend.OutputDir(in.id), true
	case ref.Raw == "run.id":
		return in.id.Run, true
	case ref.Raw == "run.name":
		return rs.run.Name, true
	case ref.Raw == "task.name":
		return in.id.Node, true
	case ref.Raw == "task.attempt":
		return strconv.Itoa(in.id.Number), true
	case len(p) == 5 && p[0] == "tasks" && p[2] == "outputs":
		return in.output(p[1], p[3], p[4])
	}
	return "", false
}

// output is an upstream node's output parameter, or its artifact's path.
func (in *inputs) output(task, kind, name string) (string, bool) {
	rs := in.rs
	up, ok := rs.plan.Index[task]
	if !ok || rs.nodes[up].status.Phase != apiv1.PhaseSucceeded {
		return "", false
	}
	ns := rs.nodes[up]
	if kind == "parameters" {
		v, ok := ns.status.Outputs[name]
		return v, ok
	}
	for _, a := range rs.plan.Tasks[up].Spec.Outputs.Artifacts {
		if a.Name == name {
			return filepath.Join(in.c.cfg.Backend.OutputDir(rs.attemptID(up, ns.attempt.Number)), a.Path), true
		}
	}
	return "", false
}

// value is an environment variable's value: its template expanded, or
// the secret it names, read from the run's project.
func (in *inputs) value(ctx context.Context, e apiv1.EnvVar) (string, error) {
	if e.ValueFrom == nil {
		return in.Expand(e.Value)
	}
	project := in.rs.run.Project
	if project == "" {
		project = "default"
	}
	if in.c.cfg.Secrets == nil {
		return "", &apiv1.Error{Code: apiv1.CodeSecret, Field: "env." + e.Name, Message: "this engine keeps no secrets"}
	}
	v, err := in.c.cfg.Secrets.Secret(ctx, project, e.ValueFrom.Secret)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", &apiv1.Error{
			Code: apiv1.CodeSecret, Field: "env." + e.Name,
			Message: fmt.Sprintf("project %q has no secret %q", project, e.ValueFrom.Secret),
			Hint:    fmt.Sprintf("kiln secret set %s --project %s, with the value on standard input", e.ValueFrom.Secret, project),
		}
	case err != nil:
		return "", &apiv1.Error{
			Code: apiv1.CodeSecret, Field: "env." + e.Name,
			Message: fmt.Sprintf("reading secret %q of project %q: %v", e.ValueFrom.Secret, project, err),
		}
	}
	return v, nil
}
