package controller

import (
	"slices"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Adopt names only the runs taken from another engine: an engine's own
// runs, which a claim renews, are never said to be adopted, however the
// claim and a submission interleave; another engine that takes them over
// from a dead owner adopts them.
func TestAdoptNamesOnlyRunsTakenFromAnother(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	id := e.submit(t, "spec:\n  tasks:\n  - {name: wait, command: [sleep, '30']}\n", nil)
	adopted, err := e.Adopt(t.Context(), func(string) bool { return false })
	if err != nil || len(adopted) != 0 {
		t.Fatalf("the owner's Adopt = %v, %v; want nothing adopted: the run is its own", adopted, err)
	}
	e.stop()
	other := e.sibling(t, 2, "adopter")
	adopted, err = other.Adopt(t.Context(), func(owner string) bool { return owner != "adopter" })
	if err != nil || !slices.Equal(adopted, []apiv1.RunID{id}) {
		t.Errorf("another engine's Adopt of a dead owner's run = %v, %v; want [%s]", adopted, err, id)
	}
	if again, err := other.Adopt(t.Context(), func(owner string) bool { return owner != "adopter" }); err != nil || len(again) != 0 {
		t.Errorf("its second Adopt = %v, %v; want nothing: the run is its own now", again, err)
	}
	if err := other.Cancel(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	other.wait(t, id)
}
