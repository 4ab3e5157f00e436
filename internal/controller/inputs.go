package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

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
	cfg *Config
	rs  *runState
	i   int
	id  job.AttemptID
	sc  *scope // nil at the top
	// seen, when set, records what each reference resolved to (see
	// apiv1.NodeStatus.Inputs).
	seen map[string]string
}

var _ node.Inputs = (*inputs)(nil)

func newInputs(cfg *Config, rs *runState, i int, id job.AttemptID) *inputs {
	return &inputs{cfg: cfg, rs: rs, i: i, id: id, sc: rs.scopes[i]}
}

// scopeInputs resolves templates in a group's scope, for no attempt.
func scopeInputs(cfg *Config, rs *runState, sc *scope) *inputs {
	return &inputs{cfg: cfg, rs: rs, i: -1, sc: sc}
}

// Expand implements node.Inputs. Reading the outputs of a task that did
// not succeed (a task that runs on failure, or after a skipped one) says so.
func (in *inputs) Expand(s string) (string, error) {
	v, err := template.Expand(s, in.lookup)
	if err == nil {
		return v, nil
	}
	refs, _ := template.Refs(s)
	for _, r := range refs {
		if len(r.Path) < 2 || r.Path[0] != "tasks" {
			continue
		}
		name := r.Path[1]
		if in.sc != nil {
			name = in.sc.prefix + name
		}
		if up, ok := in.rs.plan.Index[name]; ok && in.rs.nodes[up].status.Phase != apiv1.PhaseSucceeded {
			return "", &apiv1.Error{
				Code: apiv1.CodeTemplate, Message: fmt.Sprintf(
					"{{%s}}: task %s is %s, so it has no outputs to read", r.Raw, r.Path[1], in.rs.nodes[up].status.Phase),
				Hint: "read outputs only of tasks that succeed, or guard the reading task with when: tasks.NAME.succeeded",
			}
		}
	}
	return "", err
}

// Env implements node.Inputs. A secret's value goes into the process's
// environment only; nothing kiln writes holds it.
func (in *inputs) Env(ctx context.Context, vars []apiv1.EnvVar) (env, secrets []string, err error) {
	env = append([]string(nil), in.cfg.Env...)
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

// recording is in, recording what each reference resolves to.
func (in *inputs) recording() *inputs {
	in.seen = map[string]string{}
	return in
}

// recorded is what a recording inputs saw, or nil when it saw nothing.
func recorded(seen map[string]string) map[string]string {
	if len(seen) == 0 {
		return nil
	}
	return seen
}

// ownRefs are the references to the run's and attempt's own names and
// directories: no input of the task, so not recorded.
var ownRefs = map[string]bool{"outputs.dir": true, "run.id": true, "run.name": true, "task.name": true, "task.attempt": true, "task.retries": true}

// lookup gives the value of one template reference, recorded if in records.
func (in *inputs) lookup(ref template.Ref) (string, bool) {
	v, ok := in.resolve(ref)
	if ok && in.seen != nil && !ownRefs[ref.Raw] {
		in.seen[ref.Raw] = v
	}
	return v, ok
}

// resolve gives the value of one template reference.
func (in *inputs) resolve(ref template.Ref) (string, bool) {
	p, rs := ref.Path, in.rs
	switch {
	case len(p) == 2 && p[0] == "params":
		params := rs.run.Params
		if in.sc != nil && in.sc.params != nil {
			params = in.sc.params
		}
		v, ok := params[p[1]]
		return v, ok
	case p[0] == "item" && in.sc != nil && in.sc.item != nil:
		return itemValue(in.sc, p[1:])
	case p[0] == "workflow" && len(p) == 2:
		return in.rs.workflowStatus(p[1])
	case ref.Raw == "outputs.dir":
		return in.cfg.Backend.OutputDir(in.id), true
	case ref.Raw == "run.id":
		return in.id.Run, true
	case ref.Raw == "run.name":
		return rs.run.Name, true
	case ref.Raw == "task.name":
		return in.id.Node, true
	case ref.Raw == "task.attempt":
		return strconv.Itoa(in.id.Number), true
	case ref.Raw == "task.retries":
		return strconv.Itoa(in.id.Number - 1), true // Argo's {{retries}}: 0 on the first attempt
	case p[0] == "federation" && rs.part != nil && (len(p) == 3 || len(p) == 4):
		v, ok := rs.part.orders[in.id.Node].Inputs[strings.Join(p[1:], ".")] // another party's output, fetched by this one
		return v, ok
	case len(p) == 5 && p[0] == "tasks" && p[2] == "outputs":
		name := p[1]
		if in.sc != nil {
			name = in.sc.prefix + name
		}
		return in.output(name, p[3], p[4])
	case len(p) == 6 && p[0] == "tasks" && p[2] == "outputs" && p[3] == "artifacts" && p[5] == "dir":
		name := p[1]
		if in.sc != nil {
			name = in.sc.prefix + name
		}
		return in.gatheredDir(name, p[4])
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
	if o := rs.plan.Tasks[up].Spec.Outputs; o != nil && rs.kinds[up].attempts && ns.status.Children == nil {
		for _, a := range o.Artifacts {
			if a.Name == name {
				if cs := ns.status.Cache; cs != nil && cs.Result == apiv1.CacheHit {
					return filepath.Join(cs.OutputDir, a.Path), true // placed from the cache
				}
				return filepath.Join(in.cfg.Backend.OutputDir(rs.producer(up)), a.Path), true
			}
		}
	}
	v, ok := ns.status.Outputs[name] // a group's artifacts are its children's paths
	return v, ok
}

// producer is the attempt whose outputs node i's are: its last, or for a
// node a rerun reused, the attempt of the run it was reused from.
func (rs *runState) producer(i int) job.AttemptID {
	if r := rs.nodes[i].status.Reused; r != nil {
		return job.AttemptID{Run: string(r.Run), Node: r.Node, Number: r.Attempt}
	}
	return rs.attemptID(i, rs.nodes[i].attempt.Number)
}

// value is an environment variable's value: its template expanded, or
// the secret it names, read from the run's project.
func (in *inputs) value(ctx context.Context, e apiv1.EnvVar) (string, error) {
	if e.ValueFrom == nil {
		return in.Expand(e.Value)
	}
	project := projectOf(in.rs.run)
	if in.cfg.Secrets == nil {
		return "", &apiv1.Error{Code: apiv1.CodeSecret, Field: "env." + e.Name, Message: "this engine keeps no secrets"}
	}
	v, err := in.cfg.Secrets.Secret(ctx, project, e.ValueFrom.Secret)
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

// itemValue is a map item, a field of it, or its index: strings as they
// are, other JSON values as JSON.
func itemValue(sc *scope, path []string) (string, bool) {
	if len(path) == 1 && path[0] == "index" {
		return strconv.Itoa(sc.index), true
	}
	v := sc.item
	if len(path) == 1 {
		var fields map[string]json.RawMessage
		if json.Unmarshal(v, &fields) != nil {
			return "", false
		}
		f, ok := fields[path[0]]
		if !ok {
			return "", false
		}
		v = f
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, true
	}
	return string(v), true
}

// workflowStatus is what onExit tasks read: the run's result so far
// (Succeeded or Failed) and its failures, as a JSON list.
func (rs *runState) workflowStatus(what string) (string, bool) {
	switch what {
	case "status":
		return rs.resultSoFar(), true
	case "failures":
		type failure struct {
			Name    string `json:"name"`
			Phase   string `json:"phase"`
			Code    string `json:"code,omitempty"`
			Message string `json:"message,omitempty"`
		}
		out := []failure{}
		for _, f := range rs.failures() {
			out = append(out, failure(f))
		}
		b, _ := json.Marshal(out) // strings always encode
		return string(b), true
	}
	return "", false
}
