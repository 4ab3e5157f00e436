package slurm

import (
	"context"
	"time"

	"kiln.dev/kiln/internal/job"
)

// Watch implements backend.Notifier with one loop that lists the
// backend's jobs with squeue every Config.Poll: an attempt whose job
// ended is reported with its status, and one whose job went from pending
// to running, or waits for another reason, with its running status and
// queue. What ended before the first listing is the engine's to observe:
// resync is called right after it, and after a listing failed.
func (b *Backend) Watch(ctx context.Context, exited func(id job.AttemptID, st job.Status), resync func()) {
	var seen map[job.AttemptID]string
	for seen == nil {
		phases, err := b.phases(ctx)
		if err == nil {
			seen = phases
			break
		}
		if !b.sleep(ctx) {
			return
		}
	}
	resync()
	missed := false
	for b.sleep(ctx) {
		now, err := b.phases(ctx)
		if err != nil {
			missed = true
			continue
		}
		if missed {
			missed = false
			resync()
		}
		for id, phase := range now {
			if seen[id] != phase {
				b.report(ctx, id, exited)
			}
		}
		for id, phase := range seen {
			if _, ok := now[id]; !ok && phase != phaseEnded {
				b.report(ctx, id, exited) // gone from squeue before it was seen ending
			}
		}
		seen = now
	}
}

// phaseEnded is the phase of an attempt whose jobs all ended.
const phaseEnded = "ended"

// phases lists the backend's jobs and says of each attempt whether it is
// pending (and why), running or ended.
func (b *Backend) phases(ctx context.Context) (map[job.AttemptID]string, error) {
	jobs, err := b.allJobs(ctx)
	if err != nil {
		return nil, err
	}
	out := map[job.AttemptID]string{}
	for _, j := range jobs {
		id, ok := attemptOf(j)
		if !ok {
			continue
		}
		phase := phaseEnded
		switch {
		case j.pending():
			phase = "pending:" + j.Reason
		case !j.final():
			phase = "running"
		}
		if prev, ok := out[id]; !ok || prev == phaseEnded || phase == "running" {
			out[id] = phase // a second job of an attempt never hides the one that runs
		}
	}
	return out, nil
}

// report observes attempt id and passes on its status if it ended, or
// runs (placed or still waiting).
func (b *Backend) report(ctx context.Context, id job.AttemptID, exited func(job.AttemptID, job.Status)) {
	spec, err := b.readSpec(id)
	if err != nil {
		return // not launched from a spec of ours
	}
	st, err := b.Observe(ctx, spec)
	if err != nil || st.State == job.StateUnknown {
		return
	}
	st.Outputs, st.OutputError = nil, "" // Watch reports no outputs: Observe reads them
	exited(id, st)
}

// sleep waits one poll, and reports whether ctx is still live.
func (b *Backend) sleep(ctx context.Context) bool {
	t := time.NewTimer(b.cfg.Poll)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
