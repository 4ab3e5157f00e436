package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/client"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/server"
)

// engine is what commands ask of kiln. The engine embedded in this
// process (*app.App) and a kiln server's client (*client.Client) both
// implement it, with the same meaning and the same coded errors, so every
// command is one code path, with the same output, in both modes.
type engine interface {
	server.Engine // what a server asks of its engine: runs, logs, runtimes
	// SubmitOnce is Submit, and says whether the submission's idempotency
	// key had created the run already, so that nothing new was submitted.
	SubmitOnce(ctx context.Context, s apiv1.Submission) (run *apiv1.Run, replayed bool, err error)
	reader
	secretKeeper
	server.TemplateKeeper // a project's stored WorkflowTemplates
	server.ScheduleKeeper // a project's Schedules
	server.RuntimeKeeper  // the stored training runtimes
	server.CacheKeeper    // the stored results of cached tasks
	server.PartyKeeper    // the parties of federated runs
	server.QuotaKeeper    // the projects' quotas
	server.ArtifactKeeper // the artifacts runs' tasks stored
}

// reader reads runs and their events.
type reader interface {
	GetRun(ctx context.Context, id apiv1.RunID) (*apiv1.Run, error)
	// GetRunHead is GetRun without the run's nodes, which RunNodes
	// reads a page at a time.
	GetRunHead(ctx context.Context, id apiv1.RunID) (*apiv1.Run, error)
	RunNodes(ctx context.Context, id apiv1.RunID, q apiv1.NodeQuery) (*apiv1.NodeList, error)
	ListRuns(ctx context.Context, q apiv1.RunQuery) (*apiv1.RunList, error)
	Events(ctx context.Context, id apiv1.RunID, after int64) ([]apiv1.Event, error)
	// EventPage is the events q selects: all, the last q.Tail, or a page,
	// with how many there are in all for a tail or a page.
	EventPage(ctx context.Context, id apiv1.RunID, q apiv1.EventQuery) (*apiv1.EventList, error)
	// Messages is the federation channel's log of a party's part.
	Messages(ctx context.Context, id apiv1.RunID) ([]apiv1.ChannelMessage, error)
}

// secretKeeper keeps the secrets task environments reference.
type secretKeeper interface {
	SetSecret(ctx context.Context, project, name, value string) error
	SecretNames(ctx context.Context, project string) ([]string, error)
	DeleteSecret(ctx context.Context, project, name string) error
}

// watchable is implemented by an engine in this process: it tells a
// watcher when runs change, so the watcher need not poll.
type watchable interface {
	Changes() (<-chan struct{}, func())
	// Done is closed once the engine no longer works run id.
	Done(id apiv1.RunID) <-chan struct{}
}

var (
	_ engine    = (*app.App)(nil)
	_ engine    = (*client.Client)(nil)
	_ watchable = (*app.App)(nil)
)

// use says what a command needs of the embedded engine.
type use int

const (
	// reading opens the store (and, for logs, the backend) only.
	reading use = iota
	// working also starts the engine, which works runs until the command ends.
	working
	// collecting is working, and the engine also deletes runs that are
	// due (TTL, history limits) now and then: kiln run, resume and serve.
	collecting
)

// open returns the engine a command talks to: the server's, with --server
// (or KILN_SERVER), else the one embedded in this process; and a function
// that lets it go.
func (e *env) open(ctx context.Context, u use, pool *poolFlags) (engine, func(), error) {
	if e.server != "" {
		return client.New(e.server, e.token()), func() {}, nil
	}
	a, err := e.openApp(ctx, u, pool)
	if err != nil {
		return nil, nil, err
	}
	if u >= working && a.Replicated {
		a.Close()
		return nil, nil, replicatedStore()
	}
	if u >= working {
		a.Start()
	}
	return a, func() { a.Close() }, nil
}

// openApp opens the embedded app: with the configured backend when the
// command works runs or reads what the backend keeps (logs on a cluster).
func (e *env) openApp(ctx context.Context, u use, pool *poolFlags, opts ...func(*app.Config) error) (*app.App, error) {
	cfg := app.Config{Home: e.home, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Exiting: e.exits}
	var err error
	if cfg.Store, err = e.backend.store(e.home); err != nil {
		return nil, err
	}
	if cfg.Artifacts, err = e.backend.artifacts(e.home); err != nil {
		return nil, err
	}
	if u >= working || e.readsBackend {
		if cfg, err = e.withBackend(cfg); err != nil {
			return nil, err
		}
	}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	if pool != nil {
		req, err := pool.request()
		if err != nil {
			return nil, err
		}
		cfg.Pool = req
		cfg.Log = pool.logger(e.stderr)
		if err := e.withCacheSize(&cfg, pool.cacheMaxSize); err != nil {
			return nil, err
		}
	}
	if u == collecting && cfg.GCInterval == 0 {
		cfg.GCInterval = app.DefaultGCInterval
	}
	return app.Open(ctx, cfg)
}

// poolFlags size the local resource pool.
type poolFlags struct {
	cpus    string
	memory  string
	gpus    int64
	verbose bool
	// jsonLog logs slog's JSON rather than its text (kiln serve --log-format).
	jsonLog bool
	// serving logs at INFO without -v: what an operator of kiln serve
	// reads (it started, leads, a run failed); -v adds DEBUG.
	serving bool
	// cacheMaxSize bounds the cache this engine stores results in.
	cacheMaxSize string
}

func (p *poolFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&p.cpus, "cpus", "", "CPUs this engine's tasks may use, counted with every other engine's on this home (default: all of this machine's)")
	cmd.Flags().StringVar(&p.memory, "memory", "", "memory this engine's tasks may use, e.g. 8Gi (default: all of this machine's)")
	cmd.Flags().Int64Var(&p.gpus, "gpus", 0, "GPUs this engine may hand to tasks")
	cmd.Flags().BoolVarP(&p.verbose, "verbose", "v", false, "log what the engine does")
	cmd.Flags().StringVar(&p.cacheMaxSize, "cache-max-size", "", "bytes the cache of task results may hold, e.g. 10Gi (0: no limit); past it the least recently used go (default: the configuration file's cache.maxSize, else "+defaultCacheMaxSize+")")
}

// request is the pool the flags ask for: each one set is positive and
// at most the bound a request may hold (resource.MaxMilliCPU, MaxMemory,
// MaxGPU), so that the pool and what tasks take from it stay far from
// overflowing.
func (p *poolFlags) request() (resource.Request, error) {
	var r resource.Request
	var err error
	if p.cpus != "" {
		if r.MilliCPU, err = resource.ParseCPU(p.cpus); err != nil || r.MilliCPU == 0 {
			return r, usagef("--cpus %s is not a positive number of CPUs%s", resource.Quote(p.cpus), reason(err))
		}
	}
	if p.memory != "" {
		if r.Memory, err = resource.ParseBytes(p.memory); err != nil || r.Memory == 0 {
			return r, usagef("--memory %s is not a positive quantity such as 8Gi%s", resource.Quote(p.memory), reason(err))
		}
	}
	if p.gpus < 0 || p.gpus > resource.MaxGPU {
		return r, usagef("--gpus %d is out of range: from 0 to %d", p.gpus, resource.MaxGPU)
	}
	r.GPU = p.gpus
	return r, nil
}

// reason is the message of a flag's parse error, after a colon, or "".
func reason(err error) string {
	var e *apiv1.Error
	if errors.As(err, &e) {
		return ": " + e.Message
	}
	return ""
}

func (p *poolFlags) logger(w io.Writer) *slog.Logger {
	level := slog.LevelWarn
	if p.serving {
		level = slog.LevelInfo
	}
	if p.verbose {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	if p.jsonLog {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// withApp runs fn on the embedded app, for commands that only exist in
// embedded mode (tokens, resume).
func withApp(cmd *cobra.Command, e *env, u use, pool *poolFlags, fn func(*app.App) error) error {
	if e.server != "" {
		return usagef("%s works on the kiln home of this machine, not through a server (--server or KILN_SERVER is set): "+
			"run it on the server's machine with that server's --home, without --server", cmd.CommandPath())
	}
	a, err := e.openApp(cmd.Context(), u, pool)
	if err != nil {
		return err
	}
	defer a.Close()
	if u >= working && a.Replicated {
		return replicatedStore()
	}
	if u >= working {
		a.Start()
	}
	return fn(a)
}

// replicatedStore refuses to start an engine on a store that kiln serve
// replicas share: their leader alone runs one.
func replicatedStore() error {
	return &apiv1.Error{
		Code: apiv1.CodeUsage, Field: "store",
		Message: "the store is shared by kiln serve replicas, whose leader alone runs the engine: this command works runs, so it goes to one of them",
		Hint:    "add --server URL (or set KILN_SERVER and KILN_TOKEN) naming any replica; commands that only read, such as kiln get runs, work on the store directly",
	}
}
