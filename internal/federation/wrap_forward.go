package federation

import (
	"context"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// The capabilities below are inner's, forwarded unchanged: federated
// attempts have no hosts to place or join, and keep no files of a run.

// HostOutputDir implements backend.HostOutputs.
func (w *wrapped) HostOutputDir(id job.AttemptID) string {
	if h, ok := backend.As[backend.HostOutputs](w.inner); ok {
		return h.HostOutputDir(id)
	}
	return ""
}

// Network implements backend.Networker.
func (w *wrapped) Network(ctx context.Context, id job.AttemptID, nodes, ports int) (job.Network, error) {
	n, ok := backend.As[backend.Networker](w.inner)
	if !ok {
		return job.Network{}, w.lacks("networking of several hosts")
	}
	return n.Network(ctx, id, nodes, ports)
}

// Join implements backend.Joiner.
func (w *wrapped) Join(ctx context.Context, spec *job.Spec, host int) error {
	j, ok := backend.As[backend.Joiner](w.inner)
	if !ok {
		return w.lacks("joining of hosts to a running attempt")
	}
	return j.Join(ctx, spec, host)
}

// RemoveRun implements backend.RunRemover.
func (w *wrapped) RemoveRun(ctx context.Context, run string) error {
	r, ok := backend.As[backend.RunRemover](w.inner)
	if !ok {
		return nil // inner keeps nothing of a run
	}
	return r.RemoveRun(ctx, run)
}

// Name implements backend.Named: inner's kind.
func (w *wrapped) Name() string { return backend.NameOf(w.inner) }

// RunsImages implements backend.Images, offered when inner runs images.
func (*wrapped) RunsImages() {}

// SharesAttempts implements backend.SharedAttempts, offered when inner
// shares them.
func (*wrapped) SharesAttempts() {}
