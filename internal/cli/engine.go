package cli

import (
	"context"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/resource"
)

// poolFlags size the local resource pool.
type poolFlags struct {
	cpus    string
	memory  string
	gpus    int64
	verbose bool
}

func (p *poolFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&p.cpus, "cpus", "", "CPUs kiln may use for tasks (default: all of this machine's)")
	cmd.Flags().StringVar(&p.memory, "memory", "", "memory kiln may use for tasks, e.g. 8Gi (default: all of this machine's)")
	cmd.Flags().Int64Var(&p.gpus, "gpus", 0, "GPUs kiln may hand to tasks")
	cmd.Flags().BoolVarP(&p.verbose, "verbose", "v", false, "log what the engine does")
}

func (p *poolFlags) request() (resource.Request, error) {
	var r resource.Request
	var err error
	if p.cpus != "" {
		if r.MilliCPU, err = resource.ParseCPU(p.cpus); err != nil || r.MilliCPU == 0 {
			return r, usagef("--cpus %q is not a positive number of CPUs", p.cpus)
		}
	}
	if p.memory != "" {
		if r.Memory, err = resource.ParseBytes(p.memory); err != nil || r.Memory == 0 {
			return r, usagef("--memory %q is not a positive quantity such as 8Gi", p.memory)
		}
	}
	if p.gpus < 0 {
		return r, usagef("--gpus %d is negative", p.gpus)
	}
	r.GPU = p.gpus
	return r, nil
}

// openEngine opens the embedded app with the pool flags applied.
func openEngine(ctx context.Context, e *env, p *poolFlags) (*app.App, error) {
	req, err := p.request()
	if err != nil {
		return nil, err
	}
	level := slog.LevelWarn
	if p.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	cfg, err := e.withBackend(app.Config{Home: e.home, Pool: req, Log: log})
	if err != nil {
		return nil, err
	}
	return app.Open(ctx, cfg)
}

// openReader opens the app for reading with the configured backend, for
// commands that read what the backend keeps (logs on a cluster).
func openReader(ctx context.Context, e *env) (*app.App, error) {
	cfg, err := e.withBackend(app.Config{Home: e.home, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	return app.Open(ctx, cfg)
}

// openStore opens the app for reading and requests, without an engine.
func openStore(ctx context.Context, e *env) (*app.App, error) {
	if e.readsBackend {
		return openReader(ctx, e)
	}
	return app.Open(ctx, app.Config{Home: e.home, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
}
