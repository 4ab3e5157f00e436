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

// Wrap returns inner with federated attempts run by c: the engine's one
// backend, which launches a federated attempt's shares at the parties and
// everything else on inner. It is a backend.Decorator: it offers exactly
// the capabilities inner offers (ask with backend.As), and reading files
// (backend.FileReader) always, since it serves its attempts' reports.
func Wrap(inner backend.Backend, c *Coordinator) (backend.Backend, error) {
	if inner == nil {
		return nil, fmt.Errorf("federation needs a backend to wrap")
	}
	return &wrapped{inner: inner, c: c}, nil
}

// wrapped routes federated attempts to the coordinator. Its methods of a
// capability inner lacks are reached only through a bare type assertion,
// which backend.Decorator forbids; they answer that inner lacks it.
type wrapped struct {
	inner backend.Backend
	c     *Coordinator
}

var (
	_ backend.Decorator      = (*wrapped)(nil)
	_ backend.Notifier       = (*wrapped)(nil)
	_ backend.Releaser       = (*wrapped)(nil)
	_ backend.Logger         = (*wrapped)(nil)
	_ backend.HostOutputs    = (*wrapped)(nil)
	_ backend.Networker      = (*wrapped)(nil)
	_ backend.Joiner         = (*wrapped)(nil)
	_ backend.RunRemover     = (*wrapped)(nil)
	_ backend.FileReader     = (*wrapped)(nil)
	_ backend.Named          = (*wrapped)(nil)
	_ backend.Images         = (*wrapped)(nil)
	_ backend.SharedAttempts = (*wrapped)(nil)
)

// Inner implements backend.Decorator.
func (w *wrapped) Inner() backend.Backend { return w.inner }

// Serves implements backend.Decorator: the wrapper reads its federated
// attempts' reports whatever inner reads.
func (w *wrapped) Serves(c any) bool {
	_, files := c.(*backend.FileReader)
	return files
}

// lacks is the error of a capability's method called on a wrapper whose
// inner backend lacks it.
func (w *wrapped) lacks(capability string) error {
	return fmt.Errorf("the %T backend under federation has no %s", w.inner, capability)
}

// Launch implements backend.Backend.
func (w *wrapped) Launch(ctx context.Context, spec *job.Spec) error {
	if spec.Federated != nil {
		w.c.launch(spec)
		return nil
	}
	return w.inner.Launch(ctx, spec)
}

// Observe implements backend.Backend.
func (w *wrapped) Observe(ctx context.Context, spec *job.Spec) (job.Status, error) {
	if spec.Federated != nil {
		return w.c.observe(spec), nil
	}
	return w.inner.Observe(ctx, spec)
}

// Abort implements backend.Backend.
func (w *wrapped) Abort(ctx context.Context, id job.AttemptID, grace time.Duration) error {
	if w.c.has(id) {
		w.c.abort(id, w.c.whyStopped(ctx, id))
		return nil
	}
	return w.inner.Abort(ctx, id, grace)
}

// OutputDir implements backend.Backend.
func (w *wrapped) OutputDir(id job.AttemptID) string { return w.inner.OutputDir(id) }

// Watch implements backend.Notifier: the coordinator's ends and inner's.
func (w *wrapped) Watch(ctx context.Context, exited func(id job.AttemptID, st job.Status), resync func()) {
	n, ok := backend.As[backend.Notifier](w.inner)
	if !ok {
		return
	}
	w.c.watch(ctx, exited)
	n.Watch(ctx, exited, resync)
}

// Logs implements backend.Logger: a federated attempt's log is what its
// coordinator did; each share's own log stays at its party.
func (w *wrapped) Logs(ctx context.Context, id job.AttemptID, opts backend.LogOptions, out io.Writer) error {
	if w.c.has(id) {
		return w.c.logs(id, out)
	}
	l, ok := backend.As[backend.Logger](w.inner)
	if !ok {
		return w.lacks("logs of its own")
	}
	return l.Logs(ctx, id, opts, out)
}

// ReadFile implements backend.FileReader: a federated attempt's shares, or
// what inner reads.
func (w *wrapped) ReadFile(ctx context.Context, id job.AttemptID, name string, limit int64) ([]byte, error) {
	if name == ReportFile && w.c.has(id) {
		return w.c.report(id)
	}
	if fr, ok := backend.As[backend.FileReader](w.inner); ok {
		return fr.ReadFile(ctx, id, name, limit)
	}
	return nil, fmt.Errorf("%s of %s: this backend reads no attempt files: %w", name, id, fs.ErrNotExist)
}

// Release implements backend.Releaser.
func (w *wrapped) Release(ctx context.Context, id job.AttemptID, succeeded bool) error {
	if w.c.has(id) {
		w.c.release(id)
		return nil
	}
	r, ok := backend.As[backend.Releaser](w.inner)
	if !ok {
		return nil // inner keeps nothing to release
	}
	return r.Release(ctx, id, succeeded)
}

// Close closes inner, if it closes.
func (w *wrapped) Close() error {
	if c, ok := w.inner.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
