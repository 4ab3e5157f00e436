package controller

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
)

// startAttempt records a new attempt of node i as running, on hosts
// hosts when admission sized a flexible gang (0: the node's own count);
// it is launched after the round is saved.
func (c *Controller) startAttempt(ctx context.Context, r *round, i, hosts int) {
	rs := r.rs
	ns := rs.nodes[i]
	n := ns.attempt.Number + 1
	var spec *job.Spec
	err := c.results.fetchArtifacts(ctx, rs, i) // before its files are read
	if err == nil {
		spec, err = c.buildSpec(ctx, rs, i, n, hosts)
	}
	ns.attempt = apiv1.AttemptStatus{Number: n, ID: rs.attemptID(i, n).String(), Phase: apiv1.PhaseRunning, Nodes: hosts}
	if !ns.waitingSince.IsZero() {
		c.cfg.Metrics.Admitted(r.now.Sub(ns.waitingSince))
	}
	ns.waiting, ns.waitingSince = false, time.Time{}
	rs.active[i] = true
	if err != nil { // nothing started: the attempt ends as it is recorded
		c.buildFailed(r, i, err)
		return
	}
	ns.attempt.StartedAt = r.timePtr()
	if ns.status.StartedAt == nil {
		ns.status.StartedAt = r.timePtr()
	}
	r.runStarted()
	r.setAttempt(i)
	r.setNode(i, apiv1.PhaseRunning, "Started", "", fmt.Sprintf("attempt %d started", n))
	ns.spec = spec
	r.report(i, node.Change{Started: spec})
	r.launch = append(r.launch, i)
	r.began = append(r.began, i)
}

// buildSpec builds the job spec of attempt n of node i with the node's
// handler. It is deterministic: the same attempt always gives the same
// spec. A kind whose attempts span hosts gets them from the backend: as
// many as the kind asks for, or hosts, what admission gave a flexible
// gang, when that is above 0.
func (c *Controller) buildSpec(ctx context.Context, rs *runState, i, n, hosts int) (*job.Spec, error) {
	k, t := rs.kinds[i], &rs.plan.Tasks[i]
	id := rs.attemptID(i, n)
	in := newInputs(&c.cfg, rs, i, id).recording()
	a := &node.Attempt{ID: id, Task: t, Inputs: in, Dir: filepath.Dir(c.cfg.Backend.OutputDir(id))}
	if k.networked != nil {
		netw, ok := backend.As[backend.Networker](c.cfg.Backend)
		if !ok {
			return nil, errors.New("this backend cannot run a node whose attempts span several hosts")
		}
		want, ports := k.networked.Network(t)
		if hosts > 0 {
			want = hosts
		}
		var err error
		if a.Network, err = netw.Network(ctx, id, want, ports); err != nil {
			return nil, fmt.Errorf("placing the attempt's hosts: %w", err)
		}
	}
	spec := &job.Spec{}
	err := k.Build(ctx, a, spec)
	rs.nodes[i].status.Inputs = recorded(in.seen)
	if err == nil && rs.part != nil {
		err = rs.federate(i, n, spec, a.Dir, c.cfg.Channel)
	}
	if err == nil {
		err = c.results.podArtifacts(ctx, rs, i, spec) // after federate: a federated attempt has no pods
	}
	spec.Project = projectOf(rs.run)
	return spec, err
}

// buildFailed fails node i's attempt, for good, because it could not be built.
func (c *Controller) buildFailed(r *round, i int, err error) {
	code, msg := apiv1.CodeStart, err.Error()
	var coded *apiv1.Error
	if errors.As(err, &coded) {
		code, msg = coded.Code, coded.Text() // the record keeps the code on its own
	}
	c.attemptEnded(r, i, node.Verdict{Phase: apiv1.PhaseFailed, Code: code, Message: msg, Permanent: true})
}

// endAttempt records node i's attempt as ended, takes the node out of the
// active set and gives its room back.
func (r *round) endAttempt(i int, phase apiv1.Phase, code apiv1.Code, msg string, system bool) {
	rs := r.rs
	ns := rs.nodes[i]
	ns.attempt.Phase, ns.attempt.Code, ns.attempt.Message, ns.attempt.System = phase, code, msg, system
	if ns.attempt.FinishedAt == nil {
		ns.attempt.FinishedAt = r.timePtr()
	}
	r.setAttempt(i)
	id := rs.attemptID(i, ns.attempt.Number)
	r.ended = append(r.ended, ended{id, phase == apiv1.PhaseSucceeded})
	r.released = append(r.released, id.String())
	r.releasedRoom = r.releasedRoom.Add(rs.heldClaim(i).Request)
	delete(rs.active, i)
	ns.spec, ns.stop = nil, ""
}

// attemptEnded applies node i's verdict on its attempt.
func (c *Controller) attemptEnded(r *round, i int, v node.Verdict) {
	if v.Phase == apiv1.PhaseSucceeded {
		r.attemptSucceeded(i, v.Outputs)
		if v.Artifacts != nil { // stored by the attempt's own processes
			r.rs.nodes[i].status.Artifacts = v.Artifacts
		}
		return
	}
	c.attemptFailed(r, i, v)
}

func (r *round) attemptSucceeded(i int, outputs map[string]string) {
	rs := r.rs
	r.endAttempt(i, apiv1.PhaseSucceeded, "", "", false)
	rs.nodes[i].status.Outputs = outputs
	if rs.kinds[i].grouper != nil { // its children run next
		r.nodes[i] = true
		r.expandQ = append(r.expandQ, i)
		return
	}
	r.setNode(i, apiv1.PhaseSucceeded, "Succeeded", "", "")
}

// attemptFailed ends node i's attempt as failed and either schedules a
// retry, from the task's retries or the system budget, or fails the node.
func (c *Controller) attemptFailed(r *round, i int, v node.Verdict) {
	rs := r.rs
	r.endAttempt(i, apiv1.PhaseFailed, v.Code, v.Message, v.System)
	if r.shareFailed(i, v.Code, v.Message) {
		return
	}
	ns := rs.nodes[i]
	f := failure{permanent: v.Permanent, system: v.System}
	d := nextRetry(f, ns.spent, rs.plan.Tasks[i].Retry, c.cfg.SystemRetries, rs.stopping != "", ns.attempt.Number, r.now)
	ns.spent = ns.spent.spend(f)
	msg := v.Message
	if d.note != "" {
		msg = fmt.Sprintf("attempt %d failed: %s; %s", ns.attempt.Number, v.Message, d.note)
	}
	if !d.retry {
		r.failNode(i, v.Code, msg)
		return
	}
	ns.status.RetryAt = &d.at
	rs.retrying[i] = true
	r.setNode(i, apiv1.PhaseRetrying, "BackingOff", v.Code, msg)
}

// failNode fails node i for good: its dependents that need it to succeed
// are skipped (settle), and with failFast a task at the top stops the run
// starting anything; a child's failure is its group's to judge.
func (r *round) failNode(i int, code apiv1.Code, msg string) {
	r.setNode(i, apiv1.PhaseFailed, failReason(code), code, msg)
	if r.rs.parent[i] < 0 && stopsRun(r.rs.plan.FailFast, r.rs.stopping) {
		r.stopRun(apiv1.PhaseFailing, code, fmt.Sprintf("task %s failed", r.rs.nodes[i].status.Name))
	}
}

// failReason is the reason a failure with code is recorded with: a run
// or an attempt out of time is DeadlineExceeded, as Kubernetes Jobs and
// Kubeflow Trainer say it.
func failReason(code apiv1.Code) string {
	if code == apiv1.CodeRunTimeout || code == apiv1.CodeAttemptTimeout {
		return "DeadlineExceeded"
	}
	return "Failed"
}
