package controller

import (
	"context"
	"sync/atomic"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/local"
	"kiln.dev/kiln/internal/job"
)

// refusing is the local backend refusing every launch of one node, as the
// Kubernetes backend refuses a pod the API server calls invalid.
type refusing struct {
	*local.Backend
	node     string
	launches atomic.Int32
}

func (r *refusing) Launch(ctx context.Context, spec *job.Spec) error {
	if spec.ID.Node != r.node {
		return r.Backend.Launch(ctx, spec)
	}
	r.launches.Add(1)
	return &job.RefusedError{Code: string(apiv1.CodeLaunchRefused), Message: "pod is invalid: spec.nodeSelector: Invalid value"}
}

// A launch the backend refuses for good ends its attempt once, as a
// permanent failure with the backend's code and words: it is neither
// relaunched nor retried, and the rest of the run goes on.
func TestRefusedLaunchEndsTheAttempt(t *testing.T) {
	t.Parallel()
	var be *refusing
	e := newEngine(t, 4, func(c *Config) {
		be = &refusing{Backend: c.Backend.(*local.Backend), node: "bad"}
		c.Backend = be
	})
	id := e.submit(t, `spec:
  tasks:
  - name: bad
    command: ["true"]
    retries: {limit: 3, backoff: {duration: 10ms}}
  - name: good
    command: ["true"]
`, nil)
	run := e.wait(t, id)
	if got := phases(run); got[""] != apiv1.PhaseFailed || got["bad"] != apiv1.PhaseFailed || got["good"] != apiv1.PhaseSucceeded {
		t.Fatalf("phases = %v, want the run and bad Failed, good Succeeded", got)
	}
	bad := nodeOf(run, "bad")
	// A launch is idempotent: a round that took its work before the
	// refusal was reported (a resync) finds the attempt never started and
	// launches it again under the same ID, as it would any launch still in
	// flight. The round after the report ends it, so a refused attempt is
	// launched at most twice, never in a loop.
	if n := be.launches.Load(); len(bad.Attempts) != 1 || n < 1 || n > 2 {
		t.Fatalf("bad has %d attempts and %d launches, want one attempt launched once or twice", len(bad.Attempts), n)
	}
	a := bad.Attempts[0]
	if a.Code != apiv1.CodeLaunchRefused || a.Message != "pod is invalid: spec.nodeSelector: Invalid value" {
		t.Errorf("attempt ended %s %q, want %s with the backend's words", a.Code, a.Message, apiv1.CodeLaunchRefused)
	}
	if bad.Code != apiv1.CodeLaunchRefused {
		t.Errorf("node code = %s, want %s", bad.Code, apiv1.CodeLaunchRefused)
	}
}
