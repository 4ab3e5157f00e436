// Package train is the node handler of a distributed training job: a
// gang of processes, admitted whole, whose rendezvous environment a
// framework plugin of internal/training fills in, as Kubeflow Trainer v2's
// runtime plugins do. It shows Trainer's conditions and replica counts,
// and its attempts stop while their run is suspended.
package train

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/training"
	"kiln.dev/kiln/internal/workflow"
)

// Handler runs training-job nodes.
type Handler struct{}

var (
	_ node.Handler   = Handler{}
	_ node.Networked = Handler{}
	_ node.Reporter  = Handler{}
	_ node.Suspender = Handler{}
	_ node.Framed    = Handler{}
)

// New returns the training-job handler.
func New() Handler { return Handler{} }

// Kind implements node.Handler.
func (Handler) Kind() apiv1.NodeKind { return apiv1.NodeKindTrain }

// Network implements node.Networked: a host per replica, and the ports
// the framework meets on.
func (Handler) Network(t *workflow.Task) (hosts, ports int) {
	j := t.Train
	return j.Replicas(), j.Plugin.Ports(j)
}

// Framework implements node.Framed: the name of the job's framework
// plugin ("torch", "mpi", "xgboost", "jax", "tensorflow", "plain").
func (Handler) Framework(t *workflow.Task) string { return t.Train.Plugin.Name() }

// Build implements node.Handler: the framework plugin fills in the gang
// from the trainer's command and environment and the reserved network.
func (Handler) Build(ctx context.Context, a *node.Attempt, spec *job.Spec) error {
	j := a.Task.Train
	cmd, env, err := node.Prepare(ctx, a, append(append([]string(nil), j.Command...), j.Args...), j.Env, spec)
	if err != nil {
		return err
	}
	base := len(env)
	progress, err := node.ProgressVar(a)
	if err != nil {
		return err
	}
	env = append(env, progress)
	env, err = initializerEnv(a, env, spec)
	if err != nil {
		return err
	}
	in := &training.Input{
		Command: cmd, Entrypoint: len(j.Command) == 0, Env: training.WithUnbuffered(env), Network: a.Network, Dir: a.Dir, Attempt: a.ID,
	}
	if in.Replicas, err = replicas(ctx, a, env[base:], spec); err != nil {
		return err
	}
	if err := j.Plugin.Build(j, in, spec); err != nil {
		return err
	}
	training.Finish(in, spec)
	training.SetGroups(spec)
	training.EnforcePodGroupPolicy(j, spec)
	spec.Clean = j.Clean()
	return nil
}

// replicas prepares what each training-operator replica type runs in
// place of the trainer (mlPolicy.trainingOperator.replicas): its command
// and args with templates expanded, and its env built as the trainer's
// is, extra (the progress and initializer variables) appended.
func replicas(ctx context.Context, a *node.Attempt, extra []string, spec *job.Spec) (map[string]training.Replica, error) {
	op := a.Task.Train.Policy.TrainingOperator
	if op == nil || len(op.Replicas) == 0 {
		return nil, nil
	}
	out := map[string]training.Replica{}
	for t, r := range op.Replicas {
		var rep training.Replica
		if len(r.Command)+len(r.Args) > 0 {
			rep.Entrypoint = len(r.Command) == 0
			for _, s := range append(append([]string(nil), r.Command...), r.Args...) {
				v, err := a.Inputs.Expand(s)
				if err != nil {
					return nil, err
				}
				rep.Command = append(rep.Command, v)
			}
		}
		if len(r.Env) > 0 {
			env, secrets, err := a.Inputs.Env(ctx, r.Env)
			if err != nil {
				return nil, err
			}
			rep.Env = training.WithUnbuffered(append(env, extra...))
			for _, k := range secrets {
				if !slices.Contains(spec.SecretEnv, k) {
					spec.SecretEnv = append(spec.SecretEnv, k)
				}
			}
		}
		out[t] = rep
	}
	return out, nil
}

// initializerEnv points $KILN_DATASET_DIR and $KILN_MODEL_DIR at what the
// job's initializers fetched: their output artifact here, the shared
// workspace on a container backend.
func initializerEnv(a *node.Attempt, env []string, spec *job.Spec) ([]string, error) {
	names := a.Task.Train.Initializers
	if len(names) == 0 {
		return env, nil
	}
	spec.Workspace = &job.Workspace{Dirs: map[string]string{}}
	for _, name := range names {
		dir, err := a.Inputs.Expand(fmt.Sprintf("{{tasks.%s%s.outputs.artifacts.%s}}", name, apiv1.InitializerSuffix, name))
		if err != nil {
			return nil, err
		}
		v := DirEnv(name)
		env = append(env, v+"="+dir)
		spec.Workspace.Dirs[v] = name
	}
	return env, nil
}

// DirEnv is the variable that names where initializer name's result is:
// KILN_DATASET_DIR, KILN_MODEL_DIR.
func DirEnv(name string) string {
	return "KILN_" + strings.ToUpper(name) + "_DIR"
}

// Judge implements node.Handler: a failed gang names the process that
// took it down, and only the runtime's retryable exit codes restart it.
// The job's restartPolicy holds for a process the machine killed too, and
// for one OOMKilled: Never means no attempt starts after it, not even
// from the engine's system retries.
func (Handler) Judge(t *workflow.Task, st *job.Status) node.Verdict {
	v := node.JudgeExit(st)
	oom := v.Code == apiv1.CodeOOMKilled // its message names the process
	if v.Code != apiv1.CodeExit && !oom {
		return v
	}
	if st.Failed != "" {
		v.Message += "; the rest of the gang was stopped"
		if !oom {
			v.Message = fmt.Sprintf("process %s: %s", st.Failed, v.Message)
		}
		if t.Train.Clean() == job.CleanNone {
			v.Message = strings.Replace(v.Message, "was stopped", "was left to end on its own (cleanPodPolicy None)", 1)
		}
	}
	policy, of := t.Train.RestartPolicyOf(st.Failed)
	if ok, why := training.Restartable(policy, st.ExitCode, st.Signal); !ok {
		if !oom { // an OOM kill keeps its own code
			v.Code = apiv1.CodeNotRestarted
		}
		v.Permanent = true
		v.Message += fmt.Sprintf(" (not restarted: %s for %s)", why, of)
		return v
	}
	if st.System {
		return v
	}
	if t.Train.Elastic != nil && len(st.Dropped) > 0 {
		v.Code = apiv1.CodeElasticTooFew
		v.Message = fmt.Sprintf("%s; it had lost %s before, leaving fewer than minNodes (%d)", v.Message, strings.Join(st.Dropped, ", "), t.Train.Elastic.MinNodes)
	}
	if !t.Train.Retries(st.ExitCode) {
		v.Message += fmt.Sprintf(" (exit code %d is not retryable in this runtime)", st.ExitCode)
		v.Permanent = true
	}
	return v
}

// Suspends implements node.Suspender: a TrainJob's gang stops while its
// run is suspended.
func (Handler) Suspends(*workflow.Task) bool { return true }
