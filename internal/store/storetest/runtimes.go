package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// newRuntime is a runtime of kind named name whose default is numNodes nodes.
func newRuntime(kind, name string, numNodes int32) *apiv1.TrainingRuntime {
	return &apiv1.TrainingRuntime{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: kind},
		Metadata: apiv1.ObjectMeta{Name: name, Labels: map[string]string{"team": "ml"}},
		Spec:     apiv1.TrainingRuntimeSpec{MLPolicy: &apiv1.MLPolicy{NumNodes: &numNodes, Plain: &apiv1.PlainPolicy{}}},
	}
}

// withStatus is rt with the status a store gives it in project a.
func withStatus(rt *apiv1.TrainingRuntime, version int64, created, updated time.Time) *apiv1.TrainingRuntime {
	rt.Status = &apiv1.RuntimeStatus{Project: "a", Version: version, Source: apiv1.RuntimeSourceStored, CreatedAt: created, UpdatedAt: updated}
	return rt
}

func putRuntime(t *testing.T, s store.Store, project string, rt *apiv1.TrainingRuntime, now time.Time) (*apiv1.TrainingRuntime, bool) {
	t.Helper()
	got, changed, err := s.PutRuntime(t.Context(), store.PutRuntimeParams{Project: project, Runtime: rt, Now: now})
	if err != nil {
		t.Fatalf("PutRuntime(%s, %s/%s): %v", project, rt.Kind, rt.Metadata.Name, err)
	}
	return got, changed
}

func testRuntimes(t *testing.T, s store.Store) {
	ctx := t.Context()
	const kind = apiv1.KindTrainingRuntime
	t1, t2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
	steps := []struct {
		numNodes    int32
		at          time.Time
		wantVersion int64
		wantChanged bool
	}{
		{1, t0, 1, true},
		{1, t1, 1, false}, // identical: no new version, and its time stays
		{2, t1, 2, true},
		{2, t2, 2, false},
	}
	for i, st := range steps {
		got, changed := putRuntime(t, s, "a", newRuntime(kind, "rt", st.numNodes), st.at)
		updated := map[int64]time.Time{1: t0, 2: t1}[st.wantVersion]
		want := withStatus(newRuntime(kind, "rt", st.numNodes), st.wantVersion, t0, updated)
		if diff := cmp.Diff(want, got); diff != "" || changed != st.wantChanged {
			t.Errorf("put %d: changed %v, want %v; (-want +got):\n%s", i, changed, st.wantChanged, diff)
		}
	}
	cur, err := s.Runtime(ctx, store.RuntimeKey{Kind: kind, Project: "a", Name: "rt"})
	if diff := cmp.Diff(withStatus(newRuntime(kind, "rt", 2), 2, t0, t1), cur); err != nil || diff != "" {
		t.Errorf("Runtime(current) = %v; (-want +got):\n%s", err, diff)
	}
	old, err := s.Runtime(ctx, store.RuntimeKey{Kind: kind, Project: "a", Name: "rt", Version: 1})
	if diff := cmp.Diff(withStatus(newRuntime(kind, "rt", 1), 1, t0, t0), old); err != nil || diff != "" {
		t.Errorf("Runtime(version 1) = %v; the old version stays readable (-want +got):\n%s", err, diff)
	}
	if _, err := s.Runtime(ctx, store.RuntimeKey{Kind: kind, Project: "a", Name: "rt", Version: 3}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Runtime(version 3) = %v, want ErrNotFound", err)
	}

	if err := s.DeleteRuntime(ctx, store.RuntimeKey{Kind: kind, Project: "a", Name: "rt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Runtime(ctx, store.RuntimeKey{Kind: kind, Project: "a", Name: "rt"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Runtime after delete = %v, want ErrNotFound", err)
	}
	if got, err := s.Runtime(ctx, store.RuntimeKey{Kind: kind, Project: "a", Name: "rt", Version: 2}); err != nil || got.Status.Version != 2 {
		t.Errorf("Runtime(version 2) after delete = %+v, %v; a run's record may name it", got, err)
	}
	if err := s.DeleteRuntime(ctx, store.RuntimeKey{Kind: kind, Project: "a", Name: "rt"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting twice = %v, want ErrNotFound", err)
	}
	again, changed := putRuntime(t, s, "a", newRuntime(kind, "rt", 1), t2)
	if diff := cmp.Diff(withStatus(newRuntime(kind, "rt", 1), 3, t2, t2), again); !changed || diff != "" {
		t.Errorf("put after delete: changed %v; versions keep counting and it is created afresh (-want +got):\n%s", changed, diff)
	}
}

func testRuntimeScopes(t *testing.T, s store.Store) {
	ctx := t.Context()
	putRuntime(t, s, "a", newRuntime(apiv1.KindTrainingRuntime, "torch", 1), t0)
	putRuntime(t, s, "a", newRuntime(apiv1.KindTrainingRuntime, "alpha", 1), t0)
	putRuntime(t, s, "b", newRuntime(apiv1.KindTrainingRuntime, "torch", 2), t0)
	cluster, _ := putRuntime(t, s, "ignored", newRuntime(apiv1.KindClusterTrainingRuntime, "torch", 3), t0)
	if cluster.Status.Project != "" {
		t.Errorf("a ClusterTrainingRuntime is kept under project %q, want none", cluster.Status.Project)
	}
	list := func(project string) []string {
		t.Helper()
		got, err := s.ListRuntimes(ctx, project)
		if err != nil {
			t.Fatal(err)
		}
		names := []string{}
		for _, rt := range got {
			names = append(names, rt.Kind+"/"+rt.Status.Project+"/"+rt.Metadata.Name)
		}
		return names
	}
	for project, want := range map[string][]string{
		"a":     {"ClusterTrainingRuntime//torch", "TrainingRuntime/a/alpha", "TrainingRuntime/a/torch"},
		"b":     {"ClusterTrainingRuntime//torch", "TrainingRuntime/b/torch"},
		"empty": {"ClusterTrainingRuntime//torch"},
	} {
		if got := list(project); !cmp.Equal(want, got) {
			t.Errorf("ListRuntimes(%s) = %v, want %v", project, got, want)
		}
	}
	got, err := s.Runtime(ctx, store.RuntimeKey{Kind: apiv1.KindClusterTrainingRuntime, Project: "any", Name: "torch"})
	if err != nil || *got.Spec.MLPolicy.NumNodes != 3 {
		t.Errorf("Runtime(cluster torch) from any project = %+v, %v", got, err)
	}
	if err := s.DeleteRuntime(ctx, store.RuntimeKey{Kind: apiv1.KindClusterTrainingRuntime, Name: "alpha"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting a ClusterTrainingRuntime that is a project's TrainingRuntime = %v, want ErrNotFound", err)
	}
	if err := s.DeleteRuntime(ctx, store.RuntimeKey{Kind: apiv1.KindClusterTrainingRuntime, Name: "torch"}); err != nil {
		t.Fatal(err)
	}
	if got := list("a"); !cmp.Equal([]string{"TrainingRuntime/a/alpha", "TrainingRuntime/a/torch"}, got) {
		t.Errorf("ListRuntimes(a) after deleting the cluster one = %v; the project's stay", got)
	}
}
