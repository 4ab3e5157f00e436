package gc

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/sqlite"
	"kiln.dev/kiln/internal/store/storetest"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// dirRemover removes runs' directories under dir, as the local backend does.
type dirRemover struct{ dir string }

func (r dirRemover) RemoveRun(_ context.Context, run string) error {
	return os.RemoveAll(filepath.Join(r.dir, run))
}

type fixture struct {
	st   *sqlite.Store
	runs string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	home := t.TempDir()
	st, err := sqlite.Open(t.Context(), filepath.Join(home, "kiln.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &fixture{st: st, runs: filepath.Join(home, "runs")}
}

// run creates run id of name, finished as phase at t0+at, with its directory.
func (f *fixture) run(t *testing.T, id apiv1.RunID, name string, at time.Duration, phase apiv1.Phase, spec apiv1.WorkflowSpec) {
	t.Helper()
	p := storetest.NewRun(id, "me")
	p.Run.Name, p.Run.CreatedAt = name, t0.Add(at)
	p.Run.Workflow = &apiv1.Workflow{Metadata: apiv1.ObjectMeta{Name: name}, Spec: spec}
	if err := f.st.CreateRun(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	end := t0.Add(at)
	if err := f.st.Apply(t.Context(), &store.Change{Run: id, Owner: "me", Status: &apiv1.RunStatus{Phase: phase, FinishedAt: &end}}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.runs, string(id), "a", "1"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) collector(now time.Time, history *store.HistoryLimit) *Collector {
	return New(Config{Store: f.st, Remover: dirRemover{f.runs}, RunsDir: f.runs, History: history, Now: func() time.Time { return now }})
}

func ids(ds []Deletion) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, string(d.Run)+":"+d.Reason)
	}
	return out
}

func ttl(n int32) apiv1.WorkflowSpec { return apiv1.WorkflowSpec{TTLSecondsAfterFinished: &n} }

func TestCollectDeletesExpiredOverHistoryAndOrphansOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(t, "short", "a", 0, apiv1.PhaseSucceeded, ttl(1))
	f.run(t, "long", "a", time.Second, apiv1.PhaseFailed, ttl(3600))
	f.run(t, "old", "b", 0, apiv1.PhaseSucceeded, apiv1.WorkflowSpec{})
	f.run(t, "new", "b", time.Minute, apiv1.PhaseSucceeded, apiv1.WorkflowSpec{})
	orphan, young, cache := filepath.Join(f.runs, "orphan-1"), filepath.Join(f.runs, "young-1"), filepath.Join(f.runs, "..", "cache", "x")
	for _, d := range []string{orphan, young, filepath.Dir(cache)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(cache, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := os.Chtimes(orphan, now.Add(-time.Hour), now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	c := f.collector(now, &store.HistoryLimit{Succeeded: 1, Failed: -1})
	var log bytes.Buffer
	c.cfg.Log = slog.New(slog.NewTextHandler(&log, nil))
	want := []string{"short:ttl", "long:ttl", "old:history", "orphan-1:orphan"}
	dry, err := c.Collect(t.Context(), true)
	if err != nil || !slices.Equal(ids(dry), want) {
		t.Fatalf("dry run = %v, %v; want %v", ids(dry), err, want)
	}
	if _, err := f.st.GetRun(t.Context(), "short"); err != nil {
		t.Fatalf("a dry run deleted a run: %v", err)
	}
	got, err := c.Collect(t.Context(), false)
	if err != nil || !slices.Equal(ids(got), want) {
		t.Fatalf("Collect = %v, %v; want %v", ids(got), err, want)
	}
	for _, id := range []string{"short", "long", "old", "orphan-1"} {
		if _, err := os.Stat(filepath.Join(f.runs, id)); !os.IsNotExist(err) {
			t.Errorf("directory of %s: %v, want it gone", id, err)
		}
	}
	for _, p := range []string{filepath.Join(f.runs, "new"), young, cache} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s is gone: %v", p, err)
		}
	}
	for _, want := range []string{`msg="run deleted" run=short reason=ttl`, `run=old reason=history`, `msg="orphan run directory removed" run=orphan-1 reason=orphan`} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log says:\n%s\nwant a line with %s", log.String(), want)
		}
	}
	if _, err := f.st.GetRun(t.Context(), "new"); err != nil {
		t.Errorf("the newest run is gone: %v", err)
	}
	if again, err := c.Collect(t.Context(), false); err != nil || len(again) != 0 {
		t.Errorf("second Collect = %v, %v; want nothing", ids(again), err)
	}
}

// Two collectors racing on one store delete each run once between them.
func TestRacingCollectorsDeleteEachRunOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := range 20 {
		f.run(t, apiv1.RunID("r-"+string(rune('a'+i))), "wf", time.Duration(i)*time.Second, apiv1.PhaseSucceeded, ttl(0))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var all []string
	for range 2 {
		wg.Go(func() {
			got, err := f.collector(time.Now(), nil).Collect(context.Background(), false)
			if err != nil {
				t.Errorf("Collect: %v", err)
			}
			mu.Lock()
			all = append(all, ids(got)...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(all)
	if len(all) != 20 || len(slices.Compact(all)) != 20 {
		t.Errorf("deleted %d runs in all (%v), want each of the 20 once", len(all), all)
	}
}
