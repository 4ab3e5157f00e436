// Package app is the composition root: it builds the store, the backend,
// the resource pool and the engine from a Config. It is the only package
// that imports their implementations.
package app

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/backend/kube"
	"kiln.dev/kiln/internal/backend/local"
	"kiln.dev/kiln/internal/backend/slurm"
	"kiln.dev/kiln/internal/cache"
	"kiln.dev/kiln/internal/controller"
	"kiln.dev/kiln/internal/gc"
	"kiln.dev/kiln/internal/leader"
	"kiln.dev/kiln/internal/metrics"
	"kiln.dev/kiln/internal/node/builtin"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/store"
)

// Config is what an embedded kiln is built from.
type Config struct {
	// Home is $KILN_HOME: the store, logs and outputs live there.
	Home string
	// Pool is the size of the local resource pool. Zero fields take the
	// machine's: all CPUs, all memory, no GPUs.
	Pool resource.Request
	// Workers reconcile runs in parallel. Default 4.
	Workers int
	// Grace is the time between SIGTERM and SIGKILL when stopping a task. Default 10s.
	Grace time.Duration
	// SupervisorCommand starts the supervisor; default this executable's
	// hidden "supervise" command.
	SupervisorCommand []string
	// Log receives the engine's messages.
	Log *slog.Logger
	// Backend is "local" (the default) or "kubernetes".
	Backend string
	// Kube configures the kubernetes backend.
	Kube kube.Config
	// Slurm configures the slurm backend; an empty Dir is the home.
	Slurm slurm.Config
	// Isolation keeps the local backend's tasks apart from kiln and from
	// other projects' tasks; the zero value isolates nothing.
	Isolation local.Isolation
	// TaskEnv, if not nil, is the environment tasks start from (see
	// BaseEnv); nil gives them this process's, as `kiln run` does.
	TaskEnv []string
	// CacheMaxSize caps the bytes of the cache's artifacts; 0 means no limit.
	CacheMaxSize int64
	// GCInterval is how often the running engine deletes runs past
	// their TTL or over their history limit, and orphan run directories;
	// zero never (commands that only steer a run). kiln run, resume and
	// serve take DefaultGCInterval unless told otherwise.
	GCInterval time.Duration
	// History is the history limit of names whose runs' specs set none;
	// nil keeps every run.
	History *store.HistoryLimit
	// OrphanGrace is how old a run directory without a run must be
	// before the collector removes it; default 10 minutes.
	OrphanGrace time.Duration
	// DeleteWait bounds how long deleting a run with force waits for it
	// to end after it was cancelled. Default DefaultDeleteWait.
	DeleteWait time.Duration
	// Store is where kiln keeps its state: "" or "sqlite" for
	// Home/kiln.db, or a postgres:// URL that several kiln servers may
	// share (see App.Lead).
	Store string
	// Schedules fires the stored Schedules while the engine runs (kiln
	// serve; on the leader, among replicas).
	Schedules bool
	// Serving is set for kiln serve: a home whose server uses a PostgreSQL
	// store is marked as that store's, so that commands on the home
	// without --store are refused instead of starting a store of their
	// own there.
	Serving bool
	// Artifacts chooses the artifact repository; the zero value keeps
	// the cache's bytes under Home/cache and uploads no task artifacts.
	Artifacts Artifacts
	// Exiting says that the process ends right after Close (a kiln
	// command): the SQLite store then leaves its connections, and its
	// WAL, to the exit to close, which spares it the fsyncs of copying
	// the WAL into the database file now and of starting a new one at the
	// next open (see sqlite.Options.Exiting). Nothing is less safe: a
	// process killed at that point leaves the same files.
	Exiting bool
	// Party is this kiln's party identity (kiln serve --party), and
	// Advertise the URL other parties reach it at; empty: none, and it
	// takes part in no federated run.
	Party, Advertise string
	// TLSCert is the certificate kiln serve answers HTTPS with, if it
	// does: a share's processes trust it to reach their channel.
	TLSCert string
	// PartyIdleTimeout ends this party's part of a federated run whose
	// initiator has been silent longer (KLN-7023). Default
	// DefaultPartyIdleTimeout; at least MinPartyIdleTimeout.
	PartyIdleTimeout time.Duration
}

// App is an embedded kiln: store, local backend and engine.
type App struct {
	Store      store.Store
	Backend    backend.Backend
	Controller *controller.Controller
	// Cache keeps the results of cached tasks, under Home/cache.
	Cache   *cache.Cache
	Metrics *metrics.Metrics

	// Repository holds the tasks' output artifacts when an S3 bucket is
	// configured; nil otherwise (they stay in the output directories).
	Repository artifact.Repository

	// GC deletes runs that are due, and runs deleted on request.
	GC   *gc.Collector
	Home string
	// Party and Advertise are Config's: this kiln's party identity.
	Party, Advertise string
	// tlsCert is Config's TLSCert.
	tlsCert string
	// partyIdle is Config's PartyIdleTimeout, defaulted.
	partyIdle time.Duration
	// heard throttles the writes of when initiators were last heard.
	heard heardLog
	// Replicated is set when the store may be shared by several kiln
	// servers: the engine then follows until this server leads (Lead).
	Replicated bool

	log     *slog.Logger
	elector *leader.Elector

	stop       context.CancelFunc
	life       context.Context // lives until Close
	stopped    chan struct{}
	gcEvery    time.Duration
	deleteWait time.Duration
	schedules  bool
}

// Open builds an App from cfg. Its errors are coded *apiv1.Error values.
func Open(ctx context.Context, cfg Config) (*App, error) {
	home, err := prepareHome(cfg.Home)
	if err != nil {
		return nil, err
	}
	if err := local.CheckReachable(home, cfg.Isolation.Mode); err != nil {
		return nil, err
	}
	st, replicated, err := openStore(ctx, home, cfg.Store, cfg.Serving, cfg.Exiting)
	if err != nil {
		return nil, err
	}
	a := &App{Store: st, Home: home, Party: cfg.Party, Advertise: cfg.Advertise, Replicated: replicated, log: cfg.Log, partyIdle: cmp.Or(cfg.PartyIdleTimeout, DefaultPartyIdleTimeout), tlsCert: cfg.TLSCert}
	var pool controller.Pool
	env := os.Environ()
	if cfg.TaskEnv != nil {
		env = cfg.TaskEnv
	}
	kind, err := lookupBackend(cfg.Backend)
	if err == nil {
		a.Backend, pool, err = kind.open(ctx, cfg, home)
	}
	if err == nil && backend.Has[backend.Images](a.Backend) {
		env = nil // processes in images start from the image's environment
	}
	if err == nil && cfg.Party != "" {
		a.Backend, err = a.federate(a.Backend, cfg.Log)
	}
	if err != nil {
		st.Close()
		return nil, err
	}
	a.Metrics = metrics.New()
	var cacheRepo artifact.Repository
	cacheRepo, a.Repository = openArtifacts(home, st, cfg.Artifacts)
	a.Cache = cache.New(st, filepath.Join(home, "cache"), cache.Options{MaxSize: cfg.CacheMaxSize, Log: cfg.Log, Repository: cacheRepo})
	ccfg := controller.Config{
		Store: st, Backend: a.Backend, Pool: pool, Handlers: builtin.Registry(),
		Owner: ownerID(), Workers: cfg.Workers, Grace: cfg.Grace, Env: env, Log: cfg.Log, Metrics: a.Metrics, Secrets: st,
		Cache: a.Cache, Artifacts: a.Repository,
	}
	if a.Party != "" {
		ccfg.Channel = a
	}
	a.Controller, err = controller.New(ccfg)
	if err != nil {
		st.Close()
		return nil, err
	}
	if replicated {
		a.Controller.Leadership().Follow()
	}
	a.Metrics.SetSource(a)
	a.Metrics.SetLeadership(a.leading)
	a.GC, a.gcEvery, a.deleteWait = newCollector(a, cfg), cfg.GCInterval, cfg.DeleteWait
	a.schedules = cfg.Schedules
	if a.deleteWait <= 0 {
		a.deleteWait = DefaultDeleteWait
	}
	return a, nil
}

// Both pools serve the engine.
var (
	_ controller.Pool = (*local.Pool)(nil)
	_ controller.Pool = (*resource.Pool)(nil)
)

// prepareHome makes sure home exists, is writable and lists nothing to
// other users, and returns it absolute. It is made 0700; an existing home
// loses read and write for group and others, keeping their search bit:
// isolated tasks running as other users reach their attempt through it.
func prepareHome(home string) (string, error) {
	if home == "" {
		return "", &apiv1.Error{Code: apiv1.CodeStoreOpen, Message: "no kiln home is set", Hint: "set --home or KILN_HOME"}
	}
	abs, err := filepath.Abs(home)
	if err != nil {
		return "", &apiv1.Error{Code: apiv1.CodeStoreOpen, File: home, Message: err.Error()}
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", &apiv1.Error{Code: apiv1.CodeStoreOpen, File: abs, Message: "creating the kiln home: " + unwrapPath(err)}
	}
	if fi, err := os.Stat(abs); err == nil && fi.Mode().Perm()&0o066 != 0 {
		_ = os.Chmod(abs, fi.Mode().Perm()&^0o066) // not ours to change if it fails: reading goes on
	}
	probe, err := os.CreateTemp(abs, ".write-test-*")
	if err != nil {
		return "", &apiv1.Error{Code: apiv1.CodeStoreOpen, File: abs, Message: "the kiln home is not writable: " + unwrapPath(err)}
	}
	probe.Close()
	os.Remove(probe.Name())
	return abs, nil
}

func unwrapPath(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// DefaultPool returns this machine's size: all CPUs and memory, no GPUs.
func DefaultPool() resource.Request {
	return resource.Request{MilliCPU: int64(runtime.NumCPU()) * 1000, Memory: totalMemory()}
}

func withDefaults(r resource.Request) resource.Request {
	d := DefaultPool()
	if r.MilliCPU == 0 {
		r.MilliCPU = d.MilliCPU
	}
	if r.Memory == 0 {
		r.Memory = d.Memory
	}
	return r
}

// Start runs the engine in the background until Close.
func (a *App) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	a.stop, a.stopped, a.life = cancel, make(chan struct{}), ctx
	go func() {
		collected := make(chan struct{})
		go func() {
			if a.gcEvery > 0 {
				a.GC.Run(ctx, a.gcEvery)
			}
			close(collected)
		}()
		quotas := make(chan struct{})
		go func() { a.refreshQuotas(ctx); close(quotas) }()
		scheduled := a.runSchedules(ctx)
		tended := a.tendParts(ctx)
		a.Controller.Run(ctx)
		<-tended
		<-collected
		<-scheduled
		<-quotas
		close(a.stopped)
	}()
}

// Close stops the engine, leaving running attempts to the supervisor, and
// closes the store.
func (a *App) Close() error {
	if a.stop != nil {
		a.stop()
		<-a.stopped
	}
	a.resign()
	var err error
	if c, ok := a.Backend.(io.Closer); ok {
		err = c.Close()
	}
	return errors.Join(err, a.Store.Close())
}

// Claim takes over unfinished runs whose engine is gone (ids empty: all).
func (a *App) Claim(ctx context.Context, ids ...apiv1.RunID) ([]apiv1.RunID, error) {
	claimed, err := a.Controller.Runs().Claim(ctx, ids, ownerDead)
	if a.Party != "" {
		a.watchClaimed(ctx, claimed)
	}
	return claimed, err
}

// Adopt claims every unfinished run no live engine works on, as Claim
// does, and returns the runs it took over from an engine that is gone:
// not the runs this engine already owned.
func (a *App) Adopt(ctx context.Context) ([]apiv1.RunID, error) {
	adopted, err := a.Controller.Runs().Adopt(ctx, ownerDead)
	if a.Party != "" {
		a.watchClaimed(ctx, adopted)
	}
	return adopted, err
}

// OwnerAlive reports whether owner names an engine that may still run.
func OwnerAlive(owner string) bool { return owner != "" && !ownerDead(owner) }

// RunsByPhase implements metrics.Source.
func (a *App) RunsByPhase(ctx context.Context) (map[apiv1.Phase]int, error) {
	return a.Store.CountRuns(ctx)
}

// TasksByPhase implements metrics.Source.
func (a *App) TasksByPhase() map[apiv1.Phase]int { return a.Controller.Runs().TasksByPhase() }

// QueueDepth implements metrics.Source.
func (a *App) QueueDepth() int { return a.Controller.QueueDepth() }
