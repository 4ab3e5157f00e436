// Package node is the seam between the engine and the kinds of node a
// workflow holds. Each kind (a command, a training job; later maps,
// dynamic fragments, subworkflows, gates) is a Handler. The controller
// never asks which kind a node is: it looks the node's handler up in a
// Registry and calls it, in this order, for every attempt:
//
//  1. Build, when the attempt starts (and again after a restart, with the
//     same result), to fill in the job.Spec a backend runs.
//  2. Judge, when the backend reports that the attempt ended.
//
// What only some kinds do is an optional interface, discovered by type
// assertion as Kubeflow Trainer's runtime framework and Kueue's job
// framework discover theirs: Networked (attempts that span hosts meeting
// on reserved ports), Reporter (more to show than a phase) and Suspender
// (attempts that stop while their run is suspended).
//
// Handlers are listed explicitly (node/builtin); there is no init()
// registration.
package node

import (
	"context"
	"fmt"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/workflow"
)

// Handler runs one kind of node. Handlers hold no state of their own
// between calls and are safe for concurrent use.
type Handler interface {
	// Kind is the kind of node the handler runs. It never changes.
	Kind() apiv1.NodeKind
	// Build fills in spec for attempt a. It is deterministic: the same
	// attempt always gives the same spec, so an engine that restarted
	// rebuilds exactly what it launched. An error fails the attempt with
	// the error's code (KLN-3009 if it has none), without a retry.
	Build(ctx context.Context, a *Attempt, spec *job.Spec) error
	// Judge says how an attempt that the backend reports as ended went.
	// It is not called for attempts the engine itself stopped (cancel,
	// suspend, timeouts): the engine knows why those ended.
	Judge(t *workflow.Task, st *job.Status) Verdict
}

// Attempt is what a handler builds one attempt from.
type Attempt struct {
	// ID is the attempt's deterministic ID.
	ID job.AttemptID
	// Task is the node, compiled.
	Task *workflow.Task
	// Inputs resolves what the attempt reads from its run.
	Inputs Inputs
	// Network holds the hosts and reserved ports of a Networked kind's
	// attempt; it is empty for other kinds.
	Network job.Network
	// Dir is the attempt's own directory as its processes see it: files
	// of the spec are written there.
	Dir string
}

// Inputs resolves, for one attempt, what it reads from its run.
type Inputs interface {
	// Expand expands the {{...}} templates in s.
	Expand(s string) (string, error)
	// Env returns the processes' environment: the engine's base, vars
	// (templates expanded, secrets read) and KILN_RUN_ID, KILN_TASK and
	// KILN_ATTEMPT; and the names of the variables that hold secrets.
	Env(ctx context.Context, vars []apiv1.EnvVar) (env, secrets []string, err error)
	// WorkingDir resolves a working directory as written (templates
	// expanded): relative to the directory of the run's workflow file.
	WorkingDir(dir string) string
}

// Verdict is how an attempt went, as its node's handler judges it.
type Verdict struct {
	// Phase is Succeeded or Failed.
	Phase apiv1.Phase
	// Code and Message say why a failed attempt failed.
	Code    apiv1.Code
	Message string
	// Permanent says no retry can help (a missing command, say).
	Permanent bool
	// System says the machine failed, not the task: the attempt is retried
	// from the engine's system budget, never the task's own retries.
	System bool
	// Outputs are the output parameters of a successful attempt.
	Outputs map[string]string
	// Artifacts are the output artifacts a successful attempt's own
	// processes stored in the artifact repository (job.Spec.Store).
	Artifacts []apiv1.CachedArtifact
}

// Networked is implemented by kinds whose attempts span several hosts
// that meet on ports the backend reserves (a training job's rendezvous).
// The engine asks a backend.Networker for them before Build and passes
// them in Attempt.Network.
type Networked interface {
	// Network returns how many hosts node t's attempts use and how many
	// ports they need reserved.
	Network(t *workflow.Task) (hosts, ports int)
}

// Reporter is implemented by kinds that show more of a node than its
// phase: a training job's Trainer-style conditions and replica counts.
// The engine calls Report on the node's status after each change, before
// the change is saved.
type Reporter interface {
	Report(ns *apiv1.NodeStatus, c Change)
}

// Change is what just happened to a node, for a Reporter.
type Change struct {
	// Phase, Reason and Message are the node's new phase and why.
	Phase   apiv1.Phase
	Reason  string
	Message string
	// Started is the spec of an attempt that just started, else nil.
	Started *job.Spec
	// Ended is the status of an attempt that just ended, else nil.
	Ended *job.Status
	// Queue, when set, says why some processes of the running attempt
	// wait for the cluster to place them; Placed says every one of them
	// was placed since it was last shown queued.
	Queue  *job.Queue
	Placed bool
	// Time is when it happened.
	Time time.Time
}

// Suspender is implemented by kinds whose attempts are stopped, and whose
// room is given back, while their run is suspended, as a Kubeflow
// TrainJob's are with spec.suspend. Nodes of other kinds run on.
type Suspender interface {
	// Suspends reports whether node t stops while its run is suspended.
	Suspends(t *workflow.Task) bool
}

// Versioned is implemented by kinds whose result comes from outside the
// run (an initializer's storageUri). The cache key of such a node holds
// what that source holds now, so a changed source is not a hit.
type Versioned interface {
	// Version names the content node a.Task reads from outside its run.
	// digest is the content digest of a file or directory on this
	// machine. why, when set, says why the content cannot be named: the
	// node is then not cached.
	Version(ctx context.Context, a *Attempt, digest func(path string) (string, error)) (version, why string)
}

// Framed is implemented by kinds whose nodes run a framework that the
// engine counts jobs of, as training-operator counts its jobs by
// framework: how many started, restarted, succeeded and failed.
type Framed interface {
	// Framework names node t's framework ("torch", "mpi"), "" for none.
	Framework(t *workflow.Task) string
}

// Registry finds the handler of each kind of node. It is built once, from
// an explicit list, and never changes.
type Registry struct {
	handlers map[apiv1.NodeKind]Handler
}

// NewRegistry returns a registry of handlers, or an error if two of them
// claim the same kind.
func NewRegistry(handlers ...Handler) (*Registry, error) {
	r := &Registry{handlers: make(map[apiv1.NodeKind]Handler, len(handlers))}
	for _, h := range handlers {
		if _, dup := r.handlers[h.Kind()]; dup {
			return nil, fmt.Errorf("node kind %q has two handlers", h.Kind())
		}
		r.handlers[h.Kind()] = h
	}
	return r, nil
}

// For returns the handler of kind, or an error naming the kind.
func (r *Registry) For(kind apiv1.NodeKind) (Handler, error) {
	if h, ok := r.handlers[kind]; ok {
		return h, nil
	}
	return nil, fmt.Errorf("no handler runs nodes of kind %q", kind)
}
