package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGCKeepsARunALiveRerunReadsFrom: while a rerun that reuses a run's
// results has not ended, kiln delete refuses that run (KLN-4030), and
// kiln gc (here over a history limit of 0) defers it, saying why; the
// rerun reads the reused task's artifact from it, and once the rerun has
// ended the run is collected.
func TestGCKeepsARunALiveRerunReadsFrom(t *testing.T) {
	t.Parallel()
	b := newRerunBench(t, newHome(t))
	hold := filepath.Join(b.dir, "hold")
	b.file = b.write(t, "train", `until test ! -e `+hold+`; do sleep 0.05; done`)
	src := runOnce(t, b.home, b.file)
	b.ran(t)
	writeFile(t, b.dir, "hold", "")
	rerun := startKiln(t, b.home, "rerun", string(src), "--from", "train")
	waitFor(t, "the rerun's train to start", func() bool { return slices.Contains(sortedLinesOrNone(b.ledger), "train") })

	if r := kiln(t, b.home, "delete", "run", string(src)); r.code == 0 || !strings.Contains(r.stderr, "KLN-4030") {
		t.Errorf("kiln delete run of a live rerun's source: %d %s; want KLN-4030", r.code, r.stderr)
	}
	for _, args := range [][]string{{"gc", "--dry-run", "--history-succeeded", "0"}, {"gc", "--history-succeeded", "0"}} {
		r := kiln(t, b.home, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "deferred "+string(src)) || !strings.Contains(r.stdout, "reads its results") {
			t.Errorf("kiln %v: %d\n%s%s\nwant %s deferred, saying a rerun reads it", args, r.code, r.stdout, r.stderr, src)
		}
	}
	if got := describe(t, b.home, src); got.ID != src || !exists(filepath.Join(runDir(b.home, src), "prep", "1", "outputs", "data.txt")) {
		t.Errorf("the deferred run %s lost its record or the artifact the rerun reads", src)
	}

	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	if err := rerun.Wait(); err != nil {
		t.Fatalf("the rerun: %v", err)
	}
	if got := b.seenLine(t); !strings.Contains(got, "data-of-"+string(src)) {
		t.Errorf("the rerun's train read %q, want the artifact of %s", got, src)
	}
	if r := kiln(t, b.home, "gc", "--history-succeeded", "0"); r.code != 0 || !strings.Contains(r.stdout, "deleted "+string(src)) {
		t.Errorf("kiln gc once the rerun ended: %d\n%s%s\nwant %s deleted", r.code, r.stdout, r.stderr, src)
	}
	wantGone(t, b.home, src)
}

// sortedLinesOrNone is sortedLines of path, or none if it is missing.
func sortedLinesOrNone(path string) []string {
	b, _ := os.ReadFile(path)
	lines := strings.Fields(string(b))
	slices.Sort(lines)
	return lines
}
