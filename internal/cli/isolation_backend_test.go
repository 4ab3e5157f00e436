package cli

import (
	"strings"
	"testing"

	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/backend/local"
)

// --isolation keeps local processes apart: on a cluster's backend kiln
// serve says so rather than describe accounts it does not make, and
// leaves the tasks' PATH whole.
func TestIsolationIsTheLocalBackendsOnly(t *testing.T) {
	f := taskFlags{isolation: local.IsolateUsers, firstUID: local.DefaultFirstUID}
	cfg := app.Config{Backend: "slurm"}
	line, err := f.apply(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Isolation.Mode != local.IsolateNone || !strings.Contains(line, "tasks run as the slurm backend runs them") {
		t.Errorf("isolation %q, line %q; want none, said of the slurm backend", cfg.Isolation.Mode, line)
	}
}
