package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// keyed is run id of project created with submission key key.
func keyed(id apiv1.RunID, project, key string, since time.Time) store.CreateRunParams {
	p := NewRun(id, "me")
	p.Run.Project = project
	p.Key = &store.NewSubmitKey{Key: key, Digest: "d-" + string(id), Since: since}
	return p
}

// testSubmitKeys: a run's key reads back in its project only, within the
// window; the key taken again is refused and creates nothing, in that
// project only; an expired key is taken again; deleting the run deletes
// its key.
func testSubmitKeys(t *testing.T, s store.Store) {
	ctx, old := t.Context(), t0.Add(-time.Hour)
	mustCreate(t, s, keyed("r1", "a", "k1", old))
	got, err := s.GetSubmitKey(ctx, "a", "k1", old)
	want := store.SubmitKey{Project: "a", Key: "k1", Digest: "d-r1", Run: "r1", CreatedAt: t0}
	if err != nil || *got != want {
		t.Fatalf("GetSubmitKey = %+v, %v; want %+v", got, err, want)
	}
	for _, q := range [][2]string{{"b", "k1"}, {"a", "k2"}} {
		if _, err := s.GetSubmitKey(ctx, q[0], q[1], old); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetSubmitKey(%s, %s) = %v, want ErrNotFound", q[0], q[1], err)
		}
	}
	if _, err := s.GetSubmitKey(ctx, "a", "k1", t0.Add(time.Second)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetSubmitKey past its window = %v, want ErrNotFound", err)
	}
	if err := s.CreateRun(ctx, keyed("r2", "a", "k1", old)); !errors.Is(err, store.ErrKeyTaken) {
		t.Errorf("CreateRun with a taken key = %v, want ErrKeyTaken", err)
	}
	if _, err := s.GetRun(ctx, "r2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetRun of the run refused for its key = %v, want ErrNotFound", err)
	}
	mustCreate(t, s, keyed("r3", "b", "k1", old))
	finish(t, s, "r3", apiv1.PhaseSucceeded)
	if err := s.DeleteRun(ctx, "r3"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSubmitKey(ctx, "b", "k1", old); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetSubmitKey of a deleted run's key = %v, want ErrNotFound", err)
	}
	mustCreate(t, s, keyed("r4", "a", "k1", t0.Add(time.Nanosecond)))
	if got, err := s.GetSubmitKey(ctx, "a", "k1", old); err != nil || got.Run != "r4" {
		t.Errorf("GetSubmitKey once the key expired and was taken again = %+v, %v; want run r4", got, err)
	}
}

// testSubmitKeyRace: of submissions with one key at once, one run is
// created and the others are refused with ErrKeyTaken.
func testSubmitKeyRace(t *testing.T, s store.Store) {
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.CreateRun(t.Context(), keyed(apiv1.RunID(fmt.Sprintf("r%d", i)), "a", "k", t0.Add(-time.Hour)))
		})
	}
	wg.Wait()
	created := 0
	for i, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, store.ErrKeyTaken):
			t.Errorf("CreateRun r%d = %v, want nil or ErrKeyTaken", i, err)
		}
	}
	runs, err := s.ListRuns(t.Context(), store.ListRunsParams{})
	if created != 1 || err != nil || len(runs) != 1 {
		t.Errorf("%d created, %d runs stored (%v); want 1 and 1", created, len(runs), err)
	}
}
