package federation

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/backend/backendtest"
	"kiln.dev/kiln/internal/backend/local/localtest"
	"kiln.dev/kiln/internal/job"
)

// TestMain doubles as the local supervisor of the conformance suite.
func TestMain(m *testing.M) {
	localtest.ServeIfAsked()
	os.Exit(m.Run())
}

// TestWrappedConformance runs the backend suite on the local backend
// wrapped for federation: the wrapper must keep every capability the
// local backend has, and add none it lacks (the suite skips those).
func TestWrappedConformance(t *testing.T) {
	t.Parallel()
	backendtest.Run(t, func(t *testing.T) backendtest.Harness { return wrappedHarness{localtest.NewHarness(t)} })
}

// wrappedHarness is the local harness whose backends are wrapped, each
// with a coordinator of its own, as each engine has.
type wrappedHarness struct{ *localtest.Harness }

func (h wrappedHarness) Backend(t *testing.T) backend.Backend {
	b, err := Wrap(h.Local(t), NewCoordinator(fakeDir{}, fakeRuns{}, slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWrapOffersInnersCapabilities checks that a backend with no optional
// capability, wrapped, offers none but reading files (its reports).
func TestWrapOffersInnersCapabilities(t *testing.T) {
	w, err := Wrap(bare{}, NewCoordinator(fakeDir{}, fakeRuns{}, slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for name, has := range map[string]bool{
		"Notifier": backend.Has[backend.Notifier](w), "Releaser": backend.Has[backend.Releaser](w),
		"Logger": backend.Has[backend.Logger](w), "HostOutputs": backend.Has[backend.HostOutputs](w),
		"Networker": backend.Has[backend.Networker](w), "Joiner": backend.Has[backend.Joiner](w),
		"RunRemover": backend.Has[backend.RunRemover](w), "Named": backend.Has[backend.Named](w),
		"Images": backend.Has[backend.Images](w), "SharedAttempts": backend.Has[backend.SharedAttempts](w),
	} {
		if has {
			t.Errorf("the wrapper of a bare backend offers %s", name)
		}
	}
	if !backend.Has[backend.FileReader](w) {
		t.Error("the wrapper does not read its federated attempts' reports")
	}
}

// bare is a backend with nothing but the required methods: a fake for the
// wrapper's choice of capabilities, which runs nothing.
type bare struct{}

func (bare) Launch(context.Context, *job.Spec) error { return nil }
func (bare) Observe(context.Context, *job.Spec) (job.Status, error) {
	return job.Status{}, nil
}
func (bare) Abort(context.Context, job.AttemptID, time.Duration) error { return nil }
func (bare) OutputDir(job.AttemptID) string                            { return "" }
