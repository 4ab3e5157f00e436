package federation

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// Coordinator runs federated attempts (job.Spec.Federated) for the engine
// of the initiator: one driver per attempt, which reserves every share,
// starts them all or none, and follows them until the attempt's end. It
// keeps nothing of its own that the parties do not hold: a restarted
// initiator asks them where the attempt stands and goes on from there.
type Coordinator struct {
	dir  Directory
	runs Runs
	log  *slog.Logger
	// Poll is how often a driver asks each party how its shares stand.
	Poll time.Duration

	mu      sync.Mutex
	drivers map[job.AttemptID]*driver
	exited  func(job.AttemptID, job.Status)
	ctx     context.Context // lives as long as the engine's watch
}

// NewCoordinator returns a coordinator that finds parties in dir and
// reads runs from runs.
func NewCoordinator(dir Directory, runs Runs, log *slog.Logger) *Coordinator {
	return &Coordinator{dir: dir, runs: runs, log: log, Poll: time.Second, drivers: map[job.AttemptID]*driver{}, ctx: context.Background()}
}

// launch starts spec's driver unless it runs.
func (c *Coordinator) launch(spec *job.Spec) *driver {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.drivers[spec.ID]; d != nil {
		return d
	}
	d := newDriver(c, spec)
	c.drivers[spec.ID] = d
	go d.run(c.ctx)
	return d
}

// observe returns how spec's attempt stands; an attempt without a driver
// (the initiator restarted) gets one, which picks up where the parties are.
func (c *Coordinator) observe(spec *job.Spec) job.Status {
	return c.launch(spec).status()
}

// abort stops attempt id's shares everywhere.
func (c *Coordinator) abort(id job.AttemptID, why string) {
	c.mu.Lock()
	d := c.drivers[id]
	c.mu.Unlock()
	if d != nil {
		d.stop(why)
	}
}

// ended reports attempt id's end to the engine.
func (c *Coordinator) ended(id job.AttemptID, st job.Status) {
	c.mu.Lock()
	exited := c.exited
	c.mu.Unlock()
	if exited != nil {
		exited(id, st)
	}
}

// release forgets attempt id once its end is recorded.
func (c *Coordinator) release(id job.AttemptID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.drivers[id]; d != nil && d.done() {
		delete(c.drivers, id)
	}
}

// watch takes the engine's callback for attempts that end.
func (c *Coordinator) watch(ctx context.Context, exited func(job.AttemptID, job.Status)) {
	c.mu.Lock()
	c.exited, c.ctx = exited, ctx
	c.mu.Unlock()
}

// report returns the shares of attempt id as JSON, the progress report
// of a federated node.
func (c *Coordinator) report(id job.AttemptID) ([]byte, error) {
	c.mu.Lock()
	d := c.drivers[id]
	c.mu.Unlock()
	if d == nil {
		return nil, fmt.Errorf("attempt %s: no shares yet: %w", id, fs.ErrNotExist)
	}
	return d.report(), nil
}

// logs writes what attempt id's driver did.
func (c *Coordinator) logs(id job.AttemptID, w io.Writer) error {
	c.mu.Lock()
	d := c.drivers[id]
	c.mu.Unlock()
	if d == nil {
		_, err := fmt.Fprintf(w, "attempt %s is not coordinated by this server now; each party keeps its share's log: kiln logs <run>-<party> <task> on its server\n", id)
		return err
	}
	_, err := io.WriteString(w, d.journal())
	return err
}

// has reports whether attempt id is a federated attempt this coordinator drives.
func (c *Coordinator) has(id job.AttemptID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drivers[id] != nil
}

// whyStopped says why the engine stops attempt id, from its run's record.
func (c *Coordinator) whyStopped(ctx context.Context, id job.AttemptID) string {
	run, err := c.runs.GetRun(ctx, apiv1.RunID(id.Run))
	switch {
	case err != nil:
		return "the initiator stopped the attempt"
	case run.Status.Phase == apiv1.PhaseCancelling || run.Status.Phase == apiv1.PhaseCancelled:
		return "the run was cancelled at its initiator"
	case run.Status.Code == apiv1.CodeRunTimeout:
		return "the run timed out at its initiator"
	case run.Suspend:
		return "the run was suspended at its initiator"
	}
	return "the attempt ran past the task's timeout at the initiator"
}
