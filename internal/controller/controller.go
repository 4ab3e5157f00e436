// Package controller is kiln's engine. It owns runs through leases in the
// store and moves each one forward in reconcile rounds on a worker pool fed
// by a rate-limited workqueue: backend exits, timers, cancel requests and a
// periodic resync all only enqueue a run's ID.
//
// The controller imports the store and backend interfaces, never an
// implementation.
package controller

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/store"
)

// Config configures a Controller. Zero durations take their defaults.
type Config struct {
	Store   store.Store
	Backend backend.Backend
	Pool    *resource.Pool
	// Owner names this engine in run leases; unique per process.
	Owner string
	// Workers is the number of runs reconciled at once. Default 4.
	Workers int
	// Grace is how long a stopped attempt gets between SIGTERM and SIGKILL. Default 10s.
	Grace time.Duration
	// LeaseTTL is how long a lease lasts unless renewed. Default 15s; renewed every third of it.
	LeaseTTL time.Duration
	// Resync is how often every owned run is observed whole. Default 30s.
	Resync time.Duration
	// Env is the environment every task starts from (usually os.Environ()).
	Env []string
	// Log receives the engine's own messages. Default slog.Default().
	Log *slog.Logger
	// Metrics receives measurements; nil records nothing.
	Metrics Metrics
	// Secrets gives the values task environments reference; nil has none.
	Secrets Secrets
}

// Secrets looks up the value of a project's secret.
type Secrets interface {
	Secret(ctx context.Context, project, name string) (string, error)
}

// Metrics is told what the engine measures.
type Metrics interface {
	// Reconciled records one reconcile round.
	Reconciled(d time.Duration)
	// Admitted records how long a task waited for room before it started.
	Admitted(wait time.Duration)
}

type noMetrics struct{}

func (noMetrics) Reconciled(time.Duration) {}
func (noMetrics) Admitted(time.Duration)   {}

// Controller runs the runs it owns.
type Controller struct {
	cfg   Config
	log   *slog.Logger
	queue workqueue.TypedRateLimitingInterface[apiv1.RunID]

	launches sync.WaitGroup // launches in flight
	admitted *admissionQueue

	mu       sync.Mutex
	runs     map[apiv1.RunID]*runState
	starved  map[apiv1.RunID]bool // runs with ready nodes that did not fit
	watchers map[chan struct{}]bool
}

// New returns a controller; Run starts it.
func New(cfg Config) *Controller {
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 10 * time.Second
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = 15 * time.Second
	}
	if cfg.Resync <= 0 {
		cfg.Resync = 30 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[apiv1.RunID](5*time.Millisecond, 30*time.Second)
	return &Controller{
		cfg: cfg, log: cfg.Log,
		queue:    workqueue.NewTypedRateLimitingQueueWithConfig(limiter, workqueue.TypedRateLimitingQueueConfig[apiv1.RunID]{Name: "runs"}),
		runs:     map[apiv1.RunID]*runState{},
		admitted: newAdmissionQueue(),
		starved:  map[apiv1.RunID]bool{},
		watchers: map[chan struct{}]bool{},
	}
}

// Run starts the workers and background loops and blocks until ctx ends
// and every worker has finished its round. Attempts keep running.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range c.cfg.Workers {
		wg.Go(func() {
			for c.processNext(ctx) {
			}
		})
	}
	if n, ok := c.cfg.Backend.(backend.Notifier); ok {
		wg.Go(func() { n.Watch(ctx, c.attemptExited, c.resyncAll) })
	}
	wg.Go(func() { c.leaseLoop(ctx) })
	wg.Go(func() { c.resyncLoop(ctx) })
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	c.launches.Wait()
}

// processNext reconciles one run from the queue. It returns false once the
// queue has been shut down.
func (c *Controller) processNext(ctx context.Context) bool {
	id, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(id)
	start := time.Now()
	res, err := c.Reconcile(ctx, id)
	c.cfg.Metrics.Reconciled(time.Since(start))
	switch {
	case err != nil && ctx.Err() == nil:
		c.log.Error("reconcile failed; will retry", "run", id, "err", err)
		c.queue.AddRateLimited(id)
	case res.RequeueAfter > 0:
		c.queue.Forget(id)
		c.queue.AddAfter(id, res.RequeueAfter)
	default:
		c.queue.Forget(id)
	}
	return true
}

func (c *Controller) now() time.Time { return time.Now().UTC() }

// QueueDepth is how many runs wait for a reconcile.
func (c *Controller) QueueDepth() int { return c.queue.Len() }

// TasksByPhase counts the tasks of the runs this engine works on. It reads
// the nodes' last saved phases, taking no run's lock for long.
func (c *Controller) TasksByPhase() map[apiv1.Phase]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[apiv1.Phase]int{apiv1.PhaseRunning: 0, apiv1.PhaseRetrying: 0, apiv1.PhaseSuspended: 0}
	for _, rs := range c.runs {
		out[apiv1.PhaseRunning] += int(rs.running.Load())
		out[apiv1.PhaseRetrying] += int(rs.backingOff.Load())
		out[apiv1.PhaseSuspended] += int(rs.parked.Load())
	}
	return out
}

func (c *Controller) lookup(id apiv1.RunID) *runState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[id]
}

// forget drops a run this engine no longer owns.
func (c *Controller) forget(rs *runState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs[rs.run.ID] == rs {
		c.admitted.forget(rs.run.ID)
		delete(c.runs, rs.run.ID)
		delete(c.starved, rs.run.ID)
		close(rs.done)
	}
}

// attemptExited is called by the backend when an attempt finishes.
func (c *Controller) attemptExited(id string, st job.Status) {
	runID, node, n, ok := parseAttemptID(id)
	if !ok {
		return
	}
	c.mu.Lock()
	rs := c.runs[runID]
	c.mu.Unlock()
	if rs == nil {
		return
	}
	if i, ok := rs.plan.Index[node]; ok {
		rs.markExited(i, n, st)
		c.queue.Add(runID)
	}
}

// resyncAll has every owned run observe all its active attempts.
func (c *Controller) resyncAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, rs := range c.runs {
		rs.mu.Lock()
		rs.resync = true
		rs.mu.Unlock()
		c.queue.Add(id)
	}
}

func (c *Controller) resyncLoop(ctx context.Context) {
	t := time.NewTicker(c.cfg.Resync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.resyncAll()
		}
	}
}

func (c *Controller) addStarved(id apiv1.RunID) {
	c.mu.Lock()
	c.starved[id] = true
	c.mu.Unlock()
}

// wakeStarved enqueues the runs that wait for resources, after from gave some back.
func (c *Controller) wakeStarved(from apiv1.RunID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.starved {
		delete(c.starved, id)
		if id != from {
			c.queue.Add(id)
		}
	}
}
