// Package backend defines where attempts run. The engine talks to a Backend
// only through this interface and never imports an implementation.
package backend

import (
	"context"
	"io"
	"time"

	"kiln.dev/kiln/internal/job"
)

// Backend runs attempts. All methods are safe for concurrent use and are
// keyed by the attempt's deterministic ID, so repeating a call after a
// crash does nothing twice.
type Backend interface {
	// Launch starts the attempt unless it was started before, in which case
	// it does nothing. Problems of the task itself (a missing command) are
	// not errors here: they show in Observe. An error means the backend
	// could not be reached and the call should be repeated.
	Launch(ctx context.Context, spec *job.Spec) error
	// Observe returns what the backend knows of an attempt now.
	Observe(ctx context.Context, spec *job.Spec) (job.Status, error)
	// Abort stops every process of the attempt: a polite signal first,
	// then, after grace, a forced kill. It returns at once and is a no-op
	// for an attempt that is not running.
	Abort(ctx context.Context, id job.AttemptID, grace time.Duration) error
	// OutputDir is where the attempt's outputs live, as its processes see it.
	OutputDir(id job.AttemptID) string
}

// Notifier is implemented by backends that report finished attempts as
// they happen. Without it the engine polls.
type Notifier interface {
	// Watch calls exited for every attempt that finishes, with its status
	// (Outputs not read: call Observe for those), and resync when reports
	// may have been missed (once first, since those before Watch were),
	// until ctx ends. Calls come from one goroutine.
	// An elastic gang that lost a host and runs on is reported too, with
	// a Running status whose Dropped names it, and so is a running gang
	// whose placement changed: some of it waits to be placed (Queue set,
	// with the scheduler's reason) or every process was placed since.
	Watch(ctx context.Context, exited func(id job.AttemptID, st job.Status), resync func())
}

// Releaser is implemented by backends that keep what an attempt leaves
// behind (pods) after it ends. The engine calls Release once the attempt's
// end is saved; the backend may then forget it and clean up.
type Releaser interface {
	Release(ctx context.Context, id job.AttemptID, succeeded bool) error
}

// Logger is implemented by backends that keep attempts' logs themselves
// (in the cluster) rather than in files under KILN_HOME.
type Logger interface {
	// Logs writes what the attempt's processes wrote to w, each line of a
	// gang prefixed with its process; with opts.Follow, until they end or
	// ctx is done.
	Logs(ctx context.Context, id job.AttemptID, opts LogOptions, w io.Writer) error
}

// LogOptions say which of an attempt's log lines Logs writes, and how.
type LogOptions struct {
	// Follow writes what the processes go on writing until they end.
	Follow bool
	// Tail keeps the last Tail lines of each process's log, its stdout
	// and stderr together (as a container's log on Kubernetes); 0 keeps
	// them all.
	Tail int
	// Since keeps the lines written at or after it; zero keeps them all.
	// A line whose time is not known is kept unless its whole log was
	// written before Since.
	Since time.Time
	// Timestamps starts each line with the time it was written, in RFC
	// 3339 with nanoseconds, before its process's label. A line whose
	// time was not recorded has none.
	Timestamps bool
}

// HostOutputs is implemented by backends whose attempts' output
// directories lie on this machine (local processes), or on a filesystem
// it shares with the cluster at the same path (Slurm's): the engine can
// read what attempts wrote there, and place files for the tasks that read
// them.
type HostOutputs interface {
	// HostOutputDir is attempt id's output directory as this process
	// reaches it.
	HostOutputDir(id job.AttemptID) string
}

// Networker is implemented by backends that can run multi-node jobs. It
// tells the engine where the nodes of an attempt are and reserves the
// ports they meet on.
type Networker interface {
	// Network returns the hosts of an attempt's nodes and n free ports. It
	// is idempotent: the same attempt always gets the same answer, so a
	// rebuilt spec matches the one launched.
	Network(ctx context.Context, id job.AttemptID, nodes, ports int) (job.Network, error)
}

// Joiner is implemented by backends that can add a host to a running
// attempt: an elastic gang that grows into room that came back.
type Joiner interface {
	// Join starts the processes of spec's host host in the running
	// attempt spec.ID, which counts them as its members from then on.
	// spec is the attempt's spec with that host added. It does nothing
	// when they were started before or the attempt is not running.
	Join(ctx context.Context, spec *job.Spec, host int) error
}

// RunRemover is implemented by backends that keep what a run leaves
// behind after it ended: its directory (logs, outputs, files) on this
// machine, or objects in a cluster. The engine calls RemoveRun when the
// run is deleted, after its records are gone. Removing what is already
// gone is not an error; removing a run some of whose attempts still run
// is.
type RunRemover interface {
	RemoveRun(ctx context.Context, run string) error
}

// FileReader is implemented by backends that can read a small file an
// attempt writes to its output directory while it runs (a training job's
// progress report). The local backend reads it on this machine, the
// Slurm backend over the filesystem it shares with the cluster; the
// Kubernetes backend does not implement it yet.
type FileReader interface {
	// ReadFile returns name, a path relative to the attempt's output
	// directory, if it is a regular file of at most limit bytes. A file
	// not (yet) written is an error that wraps fs.ErrNotExist.
	ReadFile(ctx context.Context, id job.AttemptID, name string, limit int64) ([]byte, error)
}

// Named is implemented by backends that say which kind they are ("local",
// "kubernetes"): the name kiln's translators of foreign documents give the
// fields this kind of backend ignores (workflow.IgnoredOn).
type Named interface {
	// Name is the backend's kind, as --backend names it.
	Name() string
}

// Images is implemented by backends that run every process in a container
// image (pods): a task there must name an image, and its processes start
// from the image's environment, not the engine's.
type Images interface {
	// RunsImages marks the capability; it does nothing.
	RunsImages()
}

// SharedAttempts is implemented by backends whose attempts are held by a
// cluster that every machine reaches: an engine on another machine adopts
// them, so replicas of kiln on several machines may take over from each
// other. Without it attempts belong to the machine that started them.
type SharedAttempts interface {
	// SharesAttempts marks the capability; it does nothing.
	SharesAttempts()
}

// Decorator is implemented by a backend that wraps another and has the
// methods of every capability, but offers one only where Inner offers it
// or where it serves the capability itself. Ask a backend that may be a
// decorator for a capability with As, never by a bare type assertion.
type Decorator interface {
	Backend
	// Inner is the backend it wraps.
	Inner() Backend
	// Serves reports whether it offers capability c itself, whatever
	// Inner offers; c is a nil pointer to the capability's interface
	// type, such as (*backend.FileReader)(nil).
	Serves(c any) bool
}

// As returns b as capability T when b offers it: b has T's methods and,
// if b is a Decorator, serves T itself or wraps a backend that offers it.
func As[T any](b Backend) (T, bool) {
	c, ok := b.(T)
	if !ok {
		return c, false
	}
	d, ok := b.(Decorator)
	if !ok || d.Serves((*T)(nil)) {
		return c, true
	}
	if _, inner := As[T](d.Inner()); !inner {
		var none T
		return none, false
	}
	return c, true
}

// Has reports whether b offers capability T (see As).
func Has[T any](b Backend) bool {
	_, ok := As[T](b)
	return ok
}

// NameOf is b's Named name, "" when it has none.
func NameOf(b Backend) string {
	if n, ok := As[Named](b); ok {
		return n.Name()
	}
	return ""
}
