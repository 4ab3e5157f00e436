package sqlite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"kiln.dev/kiln/internal/store/storetest"
)

// exitingChild, set in a child's environment, names the store the child
// (TestExitingLeavesTheWALToTheNextOpener run again) writes one run to,
// closes with Options.Exiting, and exits.
const exitingChild = "KILN_TEST_EXITING_STORE"

// A process that closes its store with Options.Exiting and exits leaves
// its commits in the WAL, not checkpointed into the database file, and
// the next process to open the store reads them from there.
func TestExitingLeavesTheWALToTheNextOpener(t *testing.T) {
	if path := os.Getenv(exitingChild); path != "" {
		s, err := Open(context.Background(), path, Options{Exiting: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CreateRun(context.Background(), storetest.NewRun("r1", "")); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		os.Exit(0)
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kiln.db")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestExitingLeavesTheWALToTheNextOpener$")
	cmd.Env = append(os.Environ(), exitingChild+"="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("after an exiting Close the WAL is %v, %v; want it left with the commits in it", fi, err)
	}
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.GetRun(t.Context(), "r1")
	if err != nil || r.ID != "r1" {
		t.Fatalf("GetRun(r1) after the child exited = %v, %v; want the run it committed", r, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !os.IsNotExist(err) {
		t.Errorf("a plain Close left the WAL (%v); want it copied into the file and removed", err)
	}
}
