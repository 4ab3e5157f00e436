// Package command is the node handler of a task that runs one process:
// its command and args, templates expanded, run directly, never through
// a shell.
package command

import (
	"context"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/workflow"
)

// Handler runs command nodes.
type Handler struct{}

var (
	_ node.Handler    = Handler{}
	_ node.Progressor = Handler{}
)

// New returns the command handler.
func New() Handler { return Handler{} }

// Kind implements node.Handler.
func (Handler) Kind() apiv1.NodeKind { return apiv1.NodeKindCommand }

// Build implements node.Handler: one process, its command then its args,
// told where to report its progress ($KILN_PROGRESS).
func (Handler) Build(ctx context.Context, a *node.Attempt, spec *job.Spec) error {
	t := a.Task.Spec
	cmd, env, err := node.Prepare(ctx, a, append(append([]string(nil), t.Command...), t.Args...), t.Env, spec)
	if err != nil {
		return err
	}
	progress, err := node.ProgressVar(a)
	if err != nil {
		return err
	}
	spec.Processes = []job.Process{{Command: cmd, Env: append(env, progress)}}
	return nil
}

// ProgressFile implements node.Progressor: a task reports its progress
// as a training job does.
func (Handler) ProgressFile(*workflow.Task) string { return node.ProgressFile }

// Progress implements node.Progressor with node.ReportProgress.
func (Handler) Progress(ns *apiv1.NodeStatus, data []byte, now time.Time) bool {
	return node.ReportProgress(ns, data, now)
}

// Judge implements node.Handler with node.JudgeExit.
func (Handler) Judge(_ *workflow.Task, st *job.Status) node.Verdict { return node.JudgeExit(st) }
