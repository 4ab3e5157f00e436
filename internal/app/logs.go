package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// logPoll is how often a followed log checks the run's record.
const logPoll = 500 * time.Millisecond

// Logs writes what a task's processes wrote to w: the attempt q asks for,
// or the latest. Following, it writes until that attempt ends, and, for
// the latest, goes on with each attempt the task starts next, until the
// task ends. Tail, Since and Timestamps apply to each attempt's lines;
// Tail only to what was written before the first is followed. A task or
// attempt the run does not have is KLN-4001.
func (a *App) Logs(ctx context.Context, q apiv1.LogQuery, w io.Writer) error {
	logger, ok := backend.As[backend.Logger](a.Backend)
	if !ok {
		return errors.New("this backend keeps no logs")
	}
	opts := logOptions(q)
	for after := 0; ; {
		n, done, err := a.nextAttempt(ctx, q, after)
		if err != nil || n == 0 {
			return err
		}
		if !q.Follow {
			return logger.Logs(ctx, a.attemptID(q, n), opts, w)
		}
		if err := a.follow(ctx, logger, q, n, opts, w); err != nil || done || q.Attempt > 0 {
			return err
		}
		after, opts.Tail = n, 0 // a later attempt's lines are all new
	}
}

// logOptions are what q asks of the backend.
func logOptions(q apiv1.LogQuery) backend.LogOptions {
	opts := backend.LogOptions{Follow: q.Follow, Tail: q.Tail, Timestamps: q.Timestamps}
	if q.Since != nil {
		opts.Since = *q.Since
	}
	return opts
}

// nextAttempt returns the attempt of q's task to write: q's own, else the
// latest, which, following, must be later than after. It waits for one
// while following; 0 means there is none to write. done says the task
// has ended.
func (a *App) nextAttempt(ctx context.Context, q apiv1.LogQuery, after int) (n int, done bool, err error) {
	for {
		run, err := a.GetRun(ctx, q.Run)
		if err != nil {
			return 0, false, err
		}
		i := slices.IndexFunc(run.Status.Nodes, func(n apiv1.NodeStatus) bool { return n.Name == q.Task })
		if i < 0 {
			return 0, false, &apiv1.Error{
				Code: apiv1.CodeRunNotFound, Object: "Run/" + string(q.Run),
				Message: fmt.Sprintf("the run has no task %q", q.Task),
				Hint:    fmt.Sprintf("kiln describe run %s lists its tasks, children (such as a map's sweep.0) included", q.Run),
			}
		}
		node := run.Status.Nodes[i]
		if node.Children != nil && len(node.Attempts) == 0 {
			return 0, false, &apiv1.Error{
				Code: apiv1.CodeUsage, Object: "Run/" + string(q.Run),
				Message: fmt.Sprintf("task %s runs no process of its own: its %d children do, as %s.<name>", q.Task, node.Children.Total, q.Task),
				Hint:    childrenHint(run, q.Task),
			}
		}
		if err := ranNothing(q, &node); err != nil {
			return 0, false, err
		}
		latest := len(node.Attempts)
		ended := node.Phase.Done() || run.Status.Phase.Done()
		switch {
		case q.Attempt > latest || q.Attempt < 0:
			return 0, false, &apiv1.Error{
				Code: apiv1.CodeRunNotFound, Object: "Run/" + string(q.Run), Field: "attempt",
				Message: fmt.Sprintf("task %s has no attempt %d (it has %d)", q.Task, q.Attempt, latest),
				Hint:    fmt.Sprintf("kiln describe run %s lists each task's attempts; without --attempt, kiln logs shows the latest", q.Run),
			}
		case q.Attempt > 0:
			return q.Attempt, ended, nil
		case latest > after:
			return latest, ended, nil
		case !q.Follow || ended:
			return 0, true, nil
		}
		if !sleep(ctx, logPoll) {
			return 0, true, nil
		}
	}
}

// childrenHint names the children of group task, as the run records
// them, for kiln logs to be asked of one.
func childrenHint(run *apiv1.Run, task string) string {
	var children []string
	for _, n := range run.Status.Nodes {
		if n.Parent == task {
			children = append(children, n.Name)
		}
	}
	if len(children) == 0 {
		return fmt.Sprintf("its children are not made yet; kiln describe run %s lists them once they are", run.ID)
	}
	shown := strings.Join(children[:min(len(children), 3)], ", ")
	if len(children) > 3 {
		shown += fmt.Sprintf(" and %d more", len(children)-3)
	}
	return fmt.Sprintf("kiln logs %s %s for one of its children: %s; kiln describe run %s lists them", run.ID, children[0], shown, run.ID)
}

// follow writes attempt n's output until it ends: the backend stops at
// its end, and the run's record stops it in case the backend cannot tell
// (an attempt whose supervisor died).
func (a *App) follow(ctx context.Context, logger backend.Logger, q apiv1.LogQuery, n int, opts backend.LogOptions, w io.Writer) error {
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for sleep(fctx, logPoll) {
			if run, err := a.Store.GetRun(fctx, q.Run); err == nil && attemptEnded(run, q.Task, n) {
				stop()
			}
		}
	}()
	err := logger.Logs(fctx, a.attemptID(q, n), opts, w)
	if ctx.Err() == nil && fctx.Err() != nil {
		return nil // the attempt ended
	}
	return err
}

func attemptEnded(run *apiv1.Run, task string, n int) bool {
	for _, node := range run.Status.Nodes {
		if node.Name == task && len(node.Attempts) >= n {
			return node.Attempts[n-1].Phase != apiv1.PhaseRunning
		}
	}
	return run.Status.Phase.Done()
}

func (a *App) attemptID(q apiv1.LogQuery, n int) job.AttemptID {
	return job.AttemptID{Run: string(q.Run), Node: q.Task, Number: n}
}

// sleep waits d, and reports false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// ranNothing is the error for the logs of a task that ran no process in
// its run: its result came from the cache, or a rerun reused it.
func ranNothing(q apiv1.LogQuery, node *apiv1.NodeStatus) error {
	if len(node.Attempts) > 0 {
		return nil
	}
	var from, task, how string
	switch c, r := node.Cache, node.Reused; {
	case c != nil && c.Result == apiv1.CacheHit:
		from, task, how = string(c.SourceRun), c.SourceNode, "its result was reused from the cache, computed by"
	case r != nil:
		from, task, how = string(r.Run), r.Node, "this rerun reused its result from"
	default:
		return nil
	}
	return &apiv1.Error{
		Code: apiv1.CodeNoLogs, Object: "Run/" + string(q.Run),
		Message: fmt.Sprintf("task %s ran nothing in this run: %s run %s (task %s)", q.Task, how, from, task),
		Hint:    fmt.Sprintf("kiln logs %s %s shows what that run wrote, while it is kept", from, task),
	}
}
