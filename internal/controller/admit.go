package controller

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/template"
)

// maxMisfits is how many ready nodes that do not fit a round looks past
// for smaller ones that do, so a round stays cheap with a long queue.
const maxMisfits = 64

// admit starts ready nodes while the pool has room for them. A node that
// does not fit waits; smaller nodes behind it may start first.
func (c *Controller) admit(ctx context.Context, r *round) {
	rs := r.rs
	if rs.stopping != "" {
		return
	}
	misfits := 0
	top, anyWaits := c.admitted.top()
	for e := rs.ready.Front(); e != nil && misfits < maxMisfits; {
		next := e.Next()
		i := e.Value.(int)
		if r.suspend && rs.plan.Tasks[i].Train != nil {
			rs.ready.Remove(e)
			c.suspendNode(r, i, "suspended before it started")
			e = next
			continue
		}
		req := rs.plan.Tasks[i].Request
		prio := rs.plan.Tasks[i].Spec.Priority
		outranked := anyWaits && top > prio
		if outranked || !c.cfg.Pool.TryAcquire(req) {
			misfits++
			r.starved = true
			c.markWaiting(r, i, outranked)
			if !anyWaits || prio > top { // it outranks what this round saw
				top, anyWaits = prio, true
			}
			if c.scheduleTimedOut(r, i) {
				rs.ready.Remove(e)
			}
			if !outranked && !rs.plan.MinRequest.Fits(c.cfg.Pool.Free()) {
				break // not even the smallest task fits: the rest wait too
			}
			e = next
			continue
		}
		rs.ready.Remove(e)
		c.startAttempt(ctx, r, i)
		e = next
	}
}

func (c *Controller) markWaiting(r *round, i int, outranked bool) {
	ns := r.rs.nodes[i]
	if ns.waiting {
		return
	}
	ns.waiting = true
	if ns.waitingSince.IsZero() {
		ns.waitingSince = r.now
	}
	if j := r.rs.plan.Tasks[i].Train; j != nil && j.ScheduleTimeout > 0 {
		r.rs.queued[i] = true
	}
	t := r.rs.plan.Tasks[i]
	c.admitted.wait(r.rs.run.ID, i, t.Spec.Priority)
	msg := fmt.Sprintf("waiting for resources: needs %s; free now %s", t.Request, c.cfg.Pool.Free())
	if outranked {
		msg = fmt.Sprintf("waiting behind a job of higher priority than %d", t.Spec.Priority)
	}
	r.setNode(i, apiv1.PhaseWaiting, "WaitingForResources", "", msg)
}

// startAttempt records a new attempt of node i as running; it is launched
// after the round is saved.
func (c *Controller) startAttempt(ctx context.Context, r *round, i int) {
	rs := r.rs
	ns := rs.nodes[i]
	n := ns.attempt.Number + 1
	ns.attempt = apiv1.AttemptStatus{
		Number: n, ID: attemptID(rs.run.ID, ns.status.Name, n),
		Phase: apiv1.PhaseRunning, StartedAt: r.timePtr(),
	}
	if !ns.waitingSince.IsZero() {
		c.cfg.Metrics.Admitted(r.now.Sub(ns.waitingSince))
	}
	ns.waiting, ns.waitingSince = false, time.Time{}
	delete(rs.queued, i)
	rs.active[i] = true
	if ns.status.StartedAt == nil {
		ns.status.StartedAt = r.timePtr()
	}
	if rs.run.Status.Phase == apiv1.PhasePending {
		rs.run.Status.StartedAt = r.timePtr()
		if rs.plan.Timeout > 0 {
			rs.deadline = r.now.Add(rs.plan.Timeout)
		}
		r.setRun(apiv1.PhaseRunning, "Started", "", "")
	}
	r.setAttempt(i)
	r.setNode(i, apiv1.PhaseRunning, "Started", "", fmt.Sprintf("attempt %d started", n))
	spec, err := c.buildSpec(ctx, rs, i, n)
	if err != nil {
		c.attemptFailed(r, i, codeOr(err, apiv1.CodeStart), err.Error(), true)
		return
	}
	ns.spec = spec
	if rs.plan.Tasks[i].Train != nil {
		ns.status.Replicas = replicasStarted(spec)
	}
	r.launch = append(r.launch, i)
}

// sideEffects launches and stops attempts after the round was saved.
func (c *Controller) sideEffects(ctx context.Context, r *round) error {
	var errs []error
	for _, i := range r.launch {
		ns := r.rs.nodes[i]
		if !r.rs.active[i] || ns.spec == nil {
			continue
		}
		c.launchAsync(ctx, r.rs, i, ns.spec)
	}
	for _, i := range r.abort {
		if ns := r.rs.nodes[i]; ns.spec != nil {
			if err := c.cfg.Backend.Abort(ctx, ns.spec.ID, c.cfg.Grace); err != nil {
				errs = append(errs, fmt.Errorf("stopping %s: %w", ns.spec.ID, err))
			}
		}
	}
	if rel, ok := c.cfg.Backend.(backend.Releaser); ok {
		for _, e := range r.ended {
			if err := rel.Release(ctx, e.id, e.succeeded); err != nil {
				c.log.Warn("cleaning up after an attempt", "attempt", e.id, "err", err)
			}
		}
	}
	if r.release {
		c.wakeStarved(r.rs.run.ID)
	}
	if r.starved {
		c.addStarved(r.rs.run.ID)
	}
	return errors.Join(errs...)
}

// launchAsync launches an attempt without holding up the run's next
// round: forking takes longer than a round. If the backend cannot be
// reached, the node is observed again, and relaunched if it never started.
func (c *Controller) launchAsync(ctx context.Context, rs *runState, i int, spec *job.Spec) {
	c.launches.Go(func() {
		if err := c.cfg.Backend.Launch(ctx, spec); err != nil {
			if ctx.Err() == nil {
				c.log.Error("launching; will retry", "attempt", spec.ID, "err", err)
				rs.markDirty(i)
				c.queue.AddRateLimited(rs.run.ID)
			}
		}
	})
}

// buildSpec builds the job spec of attempt n of node i. It is
// deterministic: the same attempt always gives the same spec.
func (c *Controller) buildSpec(ctx context.Context, rs *runState, i, n int) (*job.Spec, error) {
	t := rs.plan.Tasks[i].Spec
	id := attemptID(rs.run.ID, t.Name, n)
	if rs.plan.Tasks[i].Train != nil {
		return c.buildTrainSpec(ctx, rs, i, n, id)
	}
	spec, cmd, env, err := c.prepare(ctx, rs, i, n, id, append(append([]string(nil), t.Command...), t.Args...), t.Env)
	spec.Processes = []job.Process{{Command: cmd, Env: env}}
	return spec, err
}

// prepare does for attempt n of node i what every attempt needs, a task's
// or a gang's: it expands the command's templates, builds the environment
// (kiln's base, the task's variables with secrets read, KILN_RUN_ID and
// friends) and fills in the spec's task-level fields. The spec comes back
// even with an error, which joins every problem found.
func (c *Controller) prepare(ctx context.Context, rs *runState, i, n int, id string, command []string, vars []apiv1.EnvVar) (
	spec *job.Spec, cmd, env []string, err error,
) {
	t := rs.plan.Tasks[i].Spec
	lookup := func(ref template.Ref) (string, bool) { return c.resolve(rs, i, n, id, ref) }
	var errs []error
	expand := func(s string) string {
		v, err := template.Expand(s, lookup)
		errs = append(errs, err)
		return v
	}
	for _, s := range command {
		cmd = append(cmd, expand(s))
	}
	spec = &job.Spec{ID: id, Outputs: t.Outputs.Params(), Container: container(&rs.plan.Tasks[i])}
	env = append([]string(nil), c.cfg.Env...)
	for _, e := range vars {
		v, err := c.envValue(ctx, rs, e, expand)
		errs = append(errs, err)
		env = append(env, e.Name+"="+v)
		if e.ValueFrom != nil {
			spec.SecretEnv = append(spec.SecretEnv, e.Name)
		}
	}
	env = append(env, "KILN_RUN_ID="+string(rs.run.ID), "KILN_TASK="+t.Name, "KILN_ATTEMPT="+strconv.Itoa(n))
	spec.Container.WorkingDir = expand(t.WorkingDir)
	spec.WorkingDir = c.workingDir(rs, spec.Container.WorkingDir)
	return spec, cmd, env, errors.Join(errs...)
}

// workingDir resolves a task's working directory: relative paths, and the
// default, are relative to the directory of the workflow's file.
func (c *Controller) workingDir(rs *runState, wd string) string {
	base := ""
	if rs.run.Source != "" {
		base = filepath.Dir(rs.run.Source)
	}
	switch {
	case wd == "":
		return base
	case filepath.IsAbs(wd) || base == "":
		return wd
	}
	return filepath.Join(base, wd)
}

// resolve gives the value of one template reference for attempt n of node i.
func (c *Controller) resolve(rs *runState, i, n int, id string, ref template.Ref) (string, bool) {
	p := ref.Path
	switch {
	case len(p) == 2 && p[0] == "params":
		v, ok := rs.run.Params[p[1]]
		return v, ok
	case ref.Raw == "outputs.dir":
		return c.cfg.Backend.OutputDir(id), true
	case ref.Raw == "run.id":
		return string(rs.run.ID), true
	case ref.Raw == "run.name":
		return rs.run.Name, true
	case ref.Raw == "task.name":
		return rs.nodes[i].status.Name, true
	case ref.Raw == "task.attempt":
		return strconv.Itoa(n), true
	case len(p) == 5 && p[0] == "tasks" && p[2] == "outputs":
		return c.resolveOutput(rs, p[1], p[3], p[4])
	}
	return "", false
}

func (c *Controller) resolveOutput(rs *runState, task, kind, name string) (string, bool) {
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
			dir := c.cfg.Backend.OutputDir(attemptID(rs.run.ID, task, ns.attempt.Number))
			return filepath.Join(dir, a.Path), true
		}
	}
	return "", false
}

// envValue is an environment variable's value: its template expanded, or
// the secret it names, read from the run's project. A secret's value goes
// into the process's environment only; nothing kiln writes holds it.
func (c *Controller) envValue(ctx context.Context, rs *runState, e apiv1.EnvVar, expand func(string) string) (string, error) {
	if e.ValueFrom == nil {
		return expand(e.Value), nil
	}
	project := rs.run.Project
	if project == "" {
		project = "default"
	}
	if c.cfg.Secrets == nil {
		return "", &apiv1.Error{Code: apiv1.CodeSecret, Field: "env." + e.Name, Message: "this engine keeps no secrets"}
	}
	v, err := c.cfg.Secrets.Secret(ctx, project, e.ValueFrom.Secret)
	if err != nil {
		return "", &apiv1.Error{
			Code: apiv1.CodeSecret, Field: "env." + e.Name,
			Message: fmt.Sprintf("secret %q of project %q: %v", e.ValueFrom.Secret, project, err),
		}
	}
	return v, nil
}

// codeOr is err's code, or def when it has none.
func codeOr(err error, def apiv1.Code) apiv1.Code {
	if code := apiv1.CodeOf(err); code != "" {
		return code
	}
	return def
}
