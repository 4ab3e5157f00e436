package federation

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"time"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// ReportFile is the progress report of a federated attempt: its shares as
// the coordinator last saw them (node.Progressor of the federated kind).
const ReportFile = "shares.json"

// full is what every backend kiln has implements, and so what Wrap
// forwards: both the local and the Kubernetes backend have all of it.
type full interface {
	backend.Backend
	backend.Notifier
	backend.Logger
	backend.Networker
	backend.Joiner
	backend.RunRemover
}

// Wrap returns inner with federated attempts run by c: the engine's one
// backend, which launches a federated attempt's shares at the parties and
// everything else on inner. It keeps inner's optional capabilities.
func Wrap(inner backend.Backend, c *Coordinator) (backend.Backend, error) {
	f, ok := inner.(full)
	if !ok {
		return nil, fmt.Errorf("the %T backend cannot run federated workflows", inner)
	}
	w := &wrapped{full: f, c: c}
	_, hosts := inner.(backend.HostOutputs)
	_, releases := inner.(backend.Releaser)
	switch {
	case hosts && releases:
		return struct {
			*wrapped
			backend.HostOutputs
			backend.Releaser
		}{w, inner.(backend.HostOutputs), releasing{w}}, nil
	case hosts:
		return struct {
			*wrapped
			backend.HostOutputs
		}{w, inner.(backend.HostOutputs)}, nil
	case releases:
		return struct {
			*wrapped
			backend.Releaser
		}{w, releasing{w}}, nil
	}
	return w, nil
}

// wrapped routes federated attempts to the coordinator.
type wrapped struct {
	full
	c *Coordinator
}

var _ backend.FileReader = (*wrapped)(nil)

// Launch implements backend.Backend.
func (w *wrapped) Launch(ctx context.Context, spec *job.Spec) error {
	if spec.Federated != nil {
		w.c.launch(spec)
		return nil
	}
	return w.full.Launch(ctx, spec)
}

// Observe implements backend.Backend.
func (w *wrapped) Observe(ctx context.Context, spec *job.Spec) (job.Status, error) {
	if spec.Federated != nil {
		return w.c.observe(spec), nil
	}
	return w.full.Observe(ctx, spec)
}

// Abort implements backend.Backend.
func (w *wrapped) Abort(ctx context.Context, id job.AttemptID, grace time.Duration) error {
	if w.c.has(id) {
		w.c.abort(id, w.c.whyStopped(ctx, id))
		return nil
	}
	return w.full.Abort(ctx, id, grace)
}

// Watch implements backend.Notifier: the coordinator's ends and inner's.
func (w *wrapped) Watch(ctx context.Context, exited func(id job.AttemptID, st job.Status), resync func()) {
	w.c.watch(ctx, exited)
	w.full.Watch(ctx, exited, resync)
}

// Logs implements backend.Logger: a federated attempt's log is what its
// coordinator did; each share's own log stays at its party.
func (w *wrapped) Logs(ctx context.Context, id job.AttemptID, opts backend.LogOptions, out io.Writer) error {
	if w.c.has(id) {
		return w.c.logs(id, out)
	}
	return w.full.Logs(ctx, id, opts, out)
}

// ReadFile implements backend.FileReader: a federated attempt's shares, or
// what inner reads.
func (w *wrapped) ReadFile(ctx context.Context, id job.AttemptID, name string, limit int64) ([]byte, error) {
	if name == ReportFile && w.c.has(id) {
		return w.c.report(id)
	}
	if fr, ok := w.full.(backend.FileReader); ok {
		return fr.ReadFile(ctx, id, name, limit)
	}
	return nil, fmt.Errorf("%s of %s: this backend reads no attempt files: %w", name, id, fs.ErrNotExist)
}

// Close closes inner, if it closes.
func (w *wrapped) Close() error {
	if c, ok := w.full.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// releasing forwards backend.Releaser for attempts that are not federated.
type releasing struct{ w *wrapped }

// Release implements backend.Releaser.
func (r releasing) Release(ctx context.Context, id job.AttemptID, succeeded bool) error {
	if r.w.c.has(id) {
		r.w.c.release(id)
		return nil
	}
	return r.w.full.(backend.Releaser).Release(ctx, id, succeeded)
}
