// Package train is the node handler of a distributed training job: a
// gang of processes, admitted whole, whose rendezvous environment a
// framework plugin of internal/training fills in, as Kubeflow Trainer v2's
// runtime plugins do. It shows Trainer's conditions and replica counts,
// and its attempts stop while their run is suspended.
package train

import (
	"context"
	"fmt"
	"path/filepath"
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

// Build implements node.Handler: the framework plugin fills in the gang
// from the trainer's command and environment and the reserved network.
func (Handler) Build(ctx context.Context, a *node.Attempt, spec *job.Spec) error {
	j := a.Task.Train
	cmd, env, err := node.Prepare(ctx, a, append(append([]string(nil), j.Command...), j.Args...), j.Env, spec)
	if err != nil {
		return err
	}
	outputs, err := a.Inputs.Expand("{{outputs.dir}}")
	if err != nil {
		return err
	}
	env = append(env, ProgressEnv+"="+filepath.Join(outputs, ProgressFile))
	in := &training.Input{Command: cmd, Env: env, Network: a.Network, Dir: a.Dir, Attempt: a.ID}
	return j.Plugin.Build(j, in, spec)
}

// Judge implements node.Handler: a failed gang names the process that
// took it down, and only the runtime's retryable exit codes restart it.
func (Handler) Judge(t *workflow.Task, st *job.Status) node.Verdict {
	v := node.JudgeExit(st)
	if v.Code != apiv1.CodeExit || st.System {
		return v
	}
	if st.Failed != "" {
		v.Message = fmt.Sprintf("process %s: %s; the rest of the gang was stopped", st.Failed, v.Message)
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
