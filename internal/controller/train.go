package controller

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/training"
)

// buildTrainSpec builds the gang of attempt n of train node i: the backend
// places the nodes and reserves ports, the framework plugin fills in the
// processes and their environment. Like buildSpec it is deterministic.
func (c *Controller) buildTrainSpec(ctx context.Context, rs *runState, i, n int, id string) (*job.Spec, error) {
	j := rs.plan.Tasks[i].Train
	netw, ok := c.cfg.Backend.(backend.Networker)
	if !ok {
		return nil, errors.New("this backend cannot run multi-node training jobs")
	}
	network, err := netw.Network(ctx, id, j.Replicas(), j.Plugin.Ports(j))
	if err != nil {
		return nil, fmt.Errorf("placing the job's nodes: %w", err)
	}
	spec, cmd, env, err := c.prepare(ctx, rs, i, n, id, append(append([]string(nil), j.Command...), j.Args...), j.Env)
	if err != nil {
		return nil, err
	}
	in := &training.Input{Command: cmd, Env: env, Network: network, Dir: filepath.Dir(c.cfg.Backend.OutputDir(id))}
	return spec, j.Plugin.Build(j, in, spec)
}

// gangExit describes how a gang ended for the attempt's message, and
// whether its runtime lets it restart.
func gangExit(j *training.Job, st *job.Status) (string, bool) {
	msg := exitMessage(st)
	if st.Failed != "" {
		msg = fmt.Sprintf("process %s: %s; the rest of the gang was stopped", st.Failed, msg)
	}
	if j != nil && !j.Retries(st.ExitCode) {
		return msg + fmt.Sprintf(" (exit code %d is not retryable in this runtime)", st.ExitCode), false
	}
	return msg, true
}

// scheduleTimedOut fails a train node that waited for room longer than its
// runtime's gangPolicy.scheduleTimeoutSeconds, and reports whether it did.
func (c *Controller) scheduleTimedOut(r *round, i int) bool {
	ns := r.rs.nodes[i]
	j := r.rs.plan.Tasks[i].Train
	if j == nil || j.ScheduleTimeout == 0 || ns.waitingSince.IsZero() || r.now.Sub(ns.waitingSince) < j.ScheduleTimeout {
		return false
	}
	msg := fmt.Sprintf("the gang could not be admitted whole within %s: it needs %s, the pool has %s free",
		j.ScheduleTimeout, j.Request(), c.cfg.Pool.Free())
	delete(r.rs.queued, i)
	c.failNode(r, i, apiv1.CodeScheduleTimeout, msg)
	return true
}
