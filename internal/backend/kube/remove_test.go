package kube

import (
	"context"
	"testing"

	"kiln.dev/kiln/internal/job"
)

// RemoveRun deletes every object a run's attempts left behind, and no
// other run's.
func TestRemoveRunDeletesOnlyThatRunsObjects(t *testing.T) {
	h := newHarness(t, Config{CleanPolicy: CleanNever})
	ctx := context.Background()
	var specs []*job.Spec
	for _, id := range []string{"gone-aaaaa/t/1", "gone-aaaaa/u/1", "kept-bbbbb/t/1"} {
		spec := withAnnotations(&job.Spec{ID: mustID(id), Processes: []job.Process{{Command: []string{"x"}}}},
			map[string]string{"kwok.kiln.dev/exit-code": "0"})
		if err := h.Launch(ctx, spec); err != nil {
			t.Fatal(err)
		}
		h.wait(t, spec.ID)
		if err := h.Release(ctx, spec.ID, true); err != nil {
			t.Fatal(err)
		}
		specs = append(specs, spec)
	}
	for _, s := range specs {
		if n := len(h.pods(t, s.ID)); n != 1 {
			t.Fatalf("%s has %d pods before RemoveRun, want the one the clean policy keeps", s.ID, n)
		}
	}
	if err := h.RemoveRun(ctx, "gone-aaaaa"); err != nil {
		t.Fatalf("RemoveRun: %v", err)
	}
	eventually(t, "the removed run's pods to go", func() bool { return len(h.pods(t, specs[0].ID))+len(h.pods(t, specs[1].ID)) == 0 })
	if n := len(h.pods(t, specs[2].ID)); n != 1 {
		t.Errorf("the other run has %d pods, want its 1", n)
	}
	if err := h.RemoveRun(ctx, "gone-aaaaa"); err != nil {
		t.Errorf("removing it again = %v, want nil", err)
	}
}
