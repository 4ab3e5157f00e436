package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// testNodeArtifacts: the artifacts a node stored read back whole, and a
// later round's list replaces the earlier one.
func testNodeArtifacts(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("r1", "me"))
	first := []apiv1.CachedArtifact{{Name: "model", Path: "model.bin", Digest: "sha256:aa", Size: 8, Mode: 0o644}}
	second := append(first, apiv1.CachedArtifact{
		Name: "bin", Path: "bin", Digest: "sha256:bb", Size: 20, Dir: true,
		Files: []apiv1.CachedFile{{Path: "tool", Digest: "sha256:cc", Size: 20, Mode: 0o755}},
	})
	for _, arts := range [][]apiv1.CachedArtifact{first, second} {
		c := &store.Change{Run: "r1", Owner: "me", Nodes: []apiv1.NodeStatus{{Name: "a", Phase: apiv1.PhaseSucceeded, Artifacts: arts}}}
		if err := s.Apply(t.Context(), c); err != nil {
			t.Fatalf("Apply: %v", err)
		}
		got, err := s.GetRun(t.Context(), "r1")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(arts, got.Status.Nodes[0].Artifacts); diff != "" {
			t.Errorf("node a's artifacts (-want +got):\n%s", diff)
		}
		if got.Status.Nodes[1].Artifacts != nil {
			t.Errorf("node b has artifacts %+v, want none", got.Status.Nodes[1].Artifacts)
		}
	}
}
