// Package controller is kiln's engine. It owns runs through leases in the
// store and moves each one forward in reconcile rounds on a worker pool fed
// by a rate-limited workqueue: backend exits, timers, cancel requests and a
// periodic resync all only enqueue a run's ID.
//
// The controller keeps the loop, admission, the one commit per round and
// the side effects. What a node is, and how its attempts are built and
// judged, is its node handler's (internal/node): the controller never asks
// which kind a node is. It imports the store, backend and node interfaces,
// never an implementation.
package controller

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/cache"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/store"
)

// Config configures a Controller. Zero durations take their defaults.
type Config struct {
	Store   store.Store
	Backend backend.Backend
	// Pool is where attempts take their room: on the local backend, the
	// supervisor's, shared by every engine on the home.
	Pool Pool
	// Handlers runs the kinds of node.
	Handlers *node.Registry
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
	// SystemRetries is how many failures of the machine (a lost
	// supervisor, an evicted or vanished pod, a process killed from
	// outside) each node survives, apart from its own retries. Default 3;
	// negative: none.
	SystemRetries int
	// Env is the environment every task starts from (usually os.Environ()).
	Env []string
	// Log receives the engine's own messages. Default slog.Default().
	Log *slog.Logger
	// Metrics receives measurements; nil records nothing.
	Metrics Metrics
	// Cache keeps the results of cached tasks; nil runs every task.
	Cache *cache.Cache
	// Artifacts, if set, receives every succeeded task's output
	// artifacts (recorded in its status) and gives them back to the tasks
	// that read them where their files are missing; nil keeps them in
	// the output directories only.
	Artifacts artifact.Repository
	// Secrets gives the values task environments reference; nil has none.
	Secrets Secrets
	// Channel gives the shares of a party's parts of federated runs the
	// federation channel; nil gives them none.
	Channel Channel
}

// Channel gives a share of a party's part of a federated run the
// federation channel: the environment that tells attempt n's processes
// where their own server takes and hands out their messages, with the
// attempt's credential. The same attempt always gets the same.
type Channel interface {
	ChannelEnv(part apiv1.RunID, share string, n int) ([]string, error)
}

// Pool is where attempts take their room, all of it at once or none. It
// is safe for concurrent use. resource.Pool is one, in-process; the local
// backend's is the supervisor's, shared by every engine on its home.
type Pool interface {
	// Capacity is this engine's share of the machine: what its attempts
	// may take together with everything else that runs there.
	Capacity() resource.Request
	// Admit gives back the room of release's holders, then answers claims
	// in order (see resource.Ledger.Admit): one call a round.
	Admit(ctx context.Context, release []string, claims []resource.Claim) ([]resource.Admission, error)
	// Hold takes room for attempts found running, fit or not.
	Hold(ctx context.Context, holds []resource.Claim) error
	// HandOver gives the room of release's holders, attempts of this
	// engine that ended, straight to c's holder, without asking, if the
	// pool knows of no other engine waiting; false means ask instead.
	HandOver(ctx context.Context, c resource.Claim, release []string) (bool, error)
	// Release gives back holders' room; releasing twice is harmless.
	Release(ctx context.Context, holders ...string) error
	// Withdraw removes waiters that no longer wait.
	Withdraw(ctx context.Context, waiters ...string) error
}

// Granter is a Pool that, when room comes back, grants it to the nodes
// that waited for it first (see resource.Ledger), holding it for them
// until their engine asks again.
type Granter interface {
	// Granted receives, or is closed, when room was granted; call it
	// again after each receive.
	Granted() <-chan struct{}
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
	// RunStarted records how long a run waited, from its submission (or
	// its retry) to its first task's start.
	RunStarted(wait time.Duration)
	// RunEnded counts a run that ended in phase, after running for d.
	RunEnded(phase apiv1.Phase, d time.Duration)
	// TaskEnded counts a node that ended in phase.
	TaskEnded(phase apiv1.Phase)
	// JobStarted counts an attempt of a framework's job that started:
	// the first of its try of the run, or a restart.
	JobStarted(framework string, restart bool)
	// JobEnded counts a framework's job that ended in phase.
	JobEnded(framework string, phase apiv1.Phase)
}

type noMetrics struct{}

func (noMetrics) Reconciled(time.Duration)            {}
func (noMetrics) Admitted(time.Duration)              {}
func (noMetrics) RunStarted(time.Duration)            {}
func (noMetrics) RunEnded(apiv1.Phase, time.Duration) {}
func (noMetrics) TaskEnded(apiv1.Phase)               {}
func (noMetrics) JobStarted(string, bool)             {}
func (noMetrics) JobEnded(string, apiv1.Phase)        {}

// Controller runs the runs it owns: it keeps the loop, the one commit
// per round and the side effects, and leaves the rest to its components:
// the runs it works and the operations on them (Runs), leadership among
// replicas (Leadership), federation orders (Parts), admission (the pool,
// quotas and the runs waiting for room), the cache and artifacts, and
// what waits for input (gates, sensors).
type Controller struct {
	cfg   Config
	log   *slog.Logger
	queue workqueue.TypedRateLimitingInterface[apiv1.RunID]

	launches sync.WaitGroup // launches in flight

	runs      *Runs
	parts     *Parts
	lead      *Leadership
	admission *admission
	hold      *holdoff
	outages   *outages // runs whose rounds the store could not take
	reports   *reports // reads running nodes' progress reports
	results   *results // the cache and the artifact repository
	waits     *waits   // gates and sensors
}

// New returns a controller; Run starts it. Store, Backend, Pool and
// Handlers are required.
func New(cfg Config) (*Controller, error) {
	if cfg.Store == nil || cfg.Backend == nil || cfg.Pool == nil || cfg.Handlers == nil {
		return nil, errors.New("controller: Store, Backend, Pool and Handlers are required")
	}
	cfg = withDefaults(cfg)
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[apiv1.RunID](5*time.Millisecond, 30*time.Second)
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(limiter, workqueue.TypedRateLimitingQueueConfig[apiv1.RunID]{Name: "runs"})
	c := &Controller{
		cfg: cfg, log: cfg.Log, queue: queue,
		lead:    newLeadership(cfg.Owner, cfg.LeaseTTL, cfg.Log),
		hold:    newHoldoff(),
		outages: newOutages(),
		reports: newReports(cfg.Backend, cfg.Log),
	}
	c.runs = &Runs{
		cfg: cfg, lead: c.lead, enqueue: queue.Add, restore: c.restore,
		byID: map[apiv1.RunID]*runState{}, watchers: map[chan struct{}]bool{},
	}
	c.results = &results{cfg: &c.cfg, log: cfg.Log}
	c.waits = &waits{cfg: &c.cfg}
	c.admission = &admission{
		pool: cfg.Pool, backend: cfg.Backend, runs: c.runs, log: cfg.Log, start: c.startAttempt, build: c.buildSpec,
		room: newRoomWaits(cfg.Pool.Capacity(), queue.Add), quota: &quotaState{enqueue: queue.Add},
	}
	c.parts = &Parts{store: cfg.Store, pool: cfg.Pool, runs: c.runs}
	c.runs.parts = c.parts
	return c, nil
}

func withDefaults(cfg Config) Config {
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
	switch {
	case cfg.SystemRetries == 0:
		cfg.SystemRetries = 3
	case cfg.SystemRetries < 0:
		cfg.SystemRetries = 0
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	return cfg
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
	if n, ok := backend.As[backend.Notifier](c.cfg.Backend); ok {
		wg.Go(func() { n.Watch(ctx, c.attemptExited, c.resyncAll) })
	}
	if g, ok := c.cfg.Pool.(Granter); ok {
		wg.Go(func() { c.grantLoop(ctx, g) })
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
	if wait := c.hold.heldOff(id); wait > 0 {
		c.queue.AddAfter(id, wait)
		return true
	}
	start := time.Now()
	res, err := c.Reconcile(ctx, id)
	c.cfg.Metrics.Reconciled(time.Since(start))
	switch {
	case err != nil && ctx.Err() == nil:
		wait := c.hold.failed(id)
		c.log.Error("reconcile failed; will retry", "run", id, "in", wait, "err", err)
		c.queue.AddAfter(id, wait)
		return true
	case res.RequeueAfter > 0:
		c.queue.AddAfter(id, res.RequeueAfter)
	}
	c.queue.Forget(id)
	c.hold.succeeded(id)
	return true
}

// now is the time the engine goes by.
func now() time.Time { return time.Now().UTC() }

// QueueDepth is how many runs wait for a reconcile.
func (c *Controller) QueueDepth() int { return c.queue.Len() }

// forget drops a run this engine no longer owns, and withdraws its nodes
// from the pool's queue.
func (c *Controller) forget(rs *runState) {
	if !c.runs.remove(rs) {
		return
	}
	c.hold.succeeded(rs.run.ID)
	c.admission.room.forget(rs.run.ID)
	c.outages.recorded(rs.run.ID)
	c.admission.quota.dropRun(rs, true)
	if w := rs.waiters(); len(w) > 0 {
		if err := c.cfg.Pool.Withdraw(context.Background(), w...); err != nil {
			c.log.Warn("withdrawing a run's waiting nodes", "run", rs.run.ID, "err", err)
		}
	}
}

// attemptExited is called by the backend when an attempt finishes. An
// attempt of a run another engine owns gave its room back: runs waiting
// for room try again.
func (c *Controller) attemptExited(id job.AttemptID, st job.Status) {
	rs := c.runs.get(apiv1.RunID(id.Run))
	if rs == nil {
		c.admission.room.wake("", 0)
		return
	}
	rs.markExited(id.Node, id.Number, st)
	c.queue.Add(rs.run.ID)
}

// resyncAll has every owned run observe all its active attempts.
func (c *Controller) resyncAll() {
	c.runs.each(func(rs *runState) {
		rs.mu.Lock()
		rs.resync = true
		rs.mu.Unlock()
		c.queue.Add(rs.run.ID)
	})
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

// Logger is where the engine writes its own messages.
func (c *Controller) Logger() *slog.Logger { return c.log }

// Leadership is how the engine stands among replicas of its store.
func (c *Controller) Leadership() *Leadership { return c.lead }

// Runs are the runs the engine works, and what users ask of them.
func (c *Controller) Runs() *Runs { return c.runs }

// Parts carry out the initiator's orders on this party's parts of
// federated runs.
func (c *Controller) Parts() *Parts { return c.parts }
