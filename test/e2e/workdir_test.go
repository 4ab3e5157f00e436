package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// The README's own "through the API" example: from the repository, with
// a relative path, against a server on this machine. Its tasks read
// scripts beside the workflow, so they must start where kiln run would
// start them.
func TestReadmeExampleThroughTheServer(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	env := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin, "KILN_HOME="+t.TempDir())
	r := kilnIn(t, repoRoot(), env, "run", "examples/pipeline.yaml")
	if r.code != 0 || !strings.Contains(r.stdout, "Succeeded in") {
		t.Fatalf("kiln run examples/pipeline.yaml through the server: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	runs := runs(t, home)
	want := filepath.Join(repoRoot(), "examples", "pipeline.yaml")
	if len(runs) != 1 || runs[0].Source != want || runs[0].WorkDir != filepath.Dir(want) {
		t.Errorf("recorded source %q, work dir %q; want %q and its directory", runs[0].Source, runs[0].WorkDir, want)
	}
}

// A submission that does not say where it comes from (as from another
// machine) runs each attempt in its own directory (its work/ directory,
// the one an isolated task may write); a relative workingDir is relative
// to that.
func TestSubmissionWithoutAWorkDirRunsInTheAttemptDirectory(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	run := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: where}
spec:
  tasks:
  - {name: here, command: [sh, -c, 'pwd > $KILN_OUTPUTS/dir'], outputs: {parameters: [{name: dir}]}}
`)
	waitFor(t, "the run to end", func() bool { return describe(t, home, run.ID).Status.Phase.Done() })
	got := describe(t, home, run.ID)
	dir := got.Status.Nodes[0].Outputs["dir"]
	attemptDir := filepath.Join(home, "runs", string(run.ID), "here", "1", "work")
	if got.Status.Phase != apiv1.PhaseSucceeded || dir != attemptDir || got.WorkDir != "" {
		t.Errorf("run %s ran in %q (work dir %q), want %q", got.Status.Phase, dir, got.WorkDir, attemptDir)
	}
}
