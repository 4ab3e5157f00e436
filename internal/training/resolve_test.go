package training

import (
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// runtimeOf is a runtime of kind named name, with nodes as its default
// number of nodes: what tells the runtimes of one name apart here.
func runtimeOf(kind, name string, nodes int32, status *apiv1.RuntimeStatus) apiv1.TrainingRuntime {
	return apiv1.TrainingRuntime{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: kind},
		Metadata: apiv1.ObjectMeta{Name: name},
		Spec:     apiv1.TrainingRuntimeSpec{MLPolicy: &apiv1.MLPolicy{NumNodes: &nodes, Plain: &apiv1.PlainPolicy{}}},
		Status:   status,
	}
}

// storedIn is a Lookup over a fixed set of stored runtimes that counts
// what it was asked.
// Parallel subtests may share one: the count is kept under a lock.
func storedIn(asked *int, list ...apiv1.TrainingRuntime) Lookup {
	var mu sync.Mutex
	return func(kind, name string) (*apiv1.TrainingRuntime, error) {
		mu.Lock()
		*asked++
		mu.Unlock()
		for i := range list {
			if list[i].Kind == kind && list[i].Metadata.Name == name {
				return &list[i], nil
			}
		}
		return nil, nil
	}
}

func TestResolveOrder(t *testing.T) {
	t.Parallel()
	project := func(v int64) *apiv1.RuntimeStatus { return &apiv1.RuntimeStatus{Project: "ml", Version: v} }
	cluster := func(v int64) *apiv1.RuntimeStatus { return &apiv1.RuntimeStatus{Version: v} }
	files := []apiv1.TrainingRuntime{runtimeOf(apiv1.KindTrainingRuntime, "everywhere", 1, nil)}
	stored := []apiv1.TrainingRuntime{
		runtimeOf(apiv1.KindTrainingRuntime, "everywhere", 2, project(4)),
		runtimeOf(apiv1.KindClusterTrainingRuntime, "everywhere", 3, cluster(1)),
		runtimeOf(apiv1.KindTrainingRuntime, "mine", 2, project(2)),
		runtimeOf(apiv1.KindClusterTrainingRuntime, "mine", 3, cluster(7)),
		runtimeOf(apiv1.KindClusterTrainingRuntime, "plain", 3, cluster(2)), // overrides the built-in
		runtimeOf(apiv1.KindClusterTrainingRuntime, "shared", 3, cluster(5)),
	}
	cases := map[string]struct {
		kind, name string
		wantNodes  int32
		want       apiv1.ResolvedRuntimeRef
	}{
		"the files win over everything": {
			name: "everywhere", wantNodes: 1,
			want: apiv1.ResolvedRuntimeRef{Kind: apiv1.KindTrainingRuntime, Name: "everywhere", Source: apiv1.RuntimeSourceFiles},
		},
		"the project's before the cluster's": {
			name: "mine", wantNodes: 2,
			want: apiv1.ResolvedRuntimeRef{Kind: apiv1.KindTrainingRuntime, Name: "mine", Project: "ml", Version: 2, Source: apiv1.RuntimeSourceStored},
		},
		"a cluster kind skips the files and the project": {
			kind: apiv1.KindClusterTrainingRuntime, name: "everywhere", wantNodes: 3,
			want: apiv1.ResolvedRuntimeRef{Kind: apiv1.KindClusterTrainingRuntime, Name: "everywhere", Version: 1, Source: apiv1.RuntimeSourceStored},
		},
		"a stored cluster runtime overrides the built-in one": {
			name: "plain", wantNodes: 3,
			want: apiv1.ResolvedRuntimeRef{Kind: apiv1.KindClusterTrainingRuntime, Name: "plain", Version: 2, Source: apiv1.RuntimeSourceStored},
		},
		"a built-in one when nothing else has the name": {
			name: "mpi", wantNodes: 1,
			want: apiv1.ResolvedRuntimeRef{Kind: apiv1.KindClusterTrainingRuntime, Name: "mpi", Source: apiv1.RuntimeSourceBuiltin},
		},
		"a built-in one is a ClusterTrainingRuntime": {
			kind: apiv1.KindClusterTrainingRuntime, name: "jax", wantNodes: 1,
			want: apiv1.ResolvedRuntimeRef{Kind: apiv1.KindClusterTrainingRuntime, Name: "jax", Source: apiv1.RuntimeSourceBuiltin},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var asked int
			r := NewRuntimes(files...).WithStored(storedIn(&asked, stored...))
			got, problem := r.Resolve(tc.kind, tc.name)
			if problem != nil {
				t.Fatalf("Resolve(%q, %q) = %+v", tc.kind, tc.name, problem)
			}
			if diff := cmp.Diff(tc.want, got.Ref); diff != "" || *got.Spec.MLPolicy.NumNodes != tc.wantNodes {
				t.Errorf("Resolve(%q, %q): %d nodes, want %d; ref (-want +got):\n%s", tc.kind, tc.name, *got.Spec.MLPolicy.NumNodes, tc.wantNodes, diff)
			}
			again, _ := r.Resolve(tc.kind, tc.name)
			before := asked
			if r.Resolve(tc.kind, tc.name); asked != before || again.Spec != got.Spec {
				t.Errorf("resolving %q again asked the store %d more times; each kind and name is asked once", tc.name, asked-before)
			}
		})
	}
}

func TestResolveProblems(t *testing.T) {
	t.Parallel()
	var asked int
	stored := storedIn(&asked,
		runtimeOf(apiv1.KindClusterTrainingRuntime, "shared", 1, nil),
		runtimeOf(apiv1.KindTrainingRuntime, "mine", 1, nil))
	cases := map[string]struct {
		kind, name string
		find       Lookup
		want       Problem
	}{
		"a name found nowhere": {
			name: "nope", find: stored,
			want: Problem{apiv1.CodeUnknownRuntime, "runtime", `no runtime is named "nope": none in the files, stored in the project or for all projects, or built in`},
		},
		"a name found nowhere, with nothing stored looked at": {
			name: "nope",
			want: Problem{apiv1.CodeUnknownRuntime, "runtime", `no runtime is named "nope"`},
		},
		"a cluster runtime asked for as the project's": {
			kind: apiv1.KindTrainingRuntime, name: "shared", find: stored,
			want: Problem{apiv1.CodeRuntimeKind, "runtimeKind", `runtime "shared" is a ClusterTrainingRuntime, not a TrainingRuntime`},
		},
		"a built-in runtime asked for as the project's": {
			kind: apiv1.KindTrainingRuntime, name: "torch-distributed",
			want: Problem{apiv1.CodeRuntimeKind, "runtimeKind", `runtime "torch-distributed" is a ClusterTrainingRuntime, not a TrainingRuntime`},
		},
		"the project's runtime asked for as a cluster one": {
			kind: apiv1.KindClusterTrainingRuntime, name: "mine", find: stored,
			want: Problem{apiv1.CodeRuntimeKind, "runtimeKind", `runtime "mine" is a TrainingRuntime, not a ClusterTrainingRuntime`},
		},
		"a kind kiln does not know": {
			kind: "Runtime", name: "mine", find: stored,
			want: Problem{apiv1.CodeRuntimeRef, "runtimeKind", `runtime kind "Runtime" is neither TrainingRuntime nor ClusterTrainingRuntime`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, problem := NewRuntimes().WithStored(tc.find).Resolve(tc.kind, tc.name)
			if got != nil || problem == nil {
				t.Fatalf("Resolve(%q, %q) = %+v, no problem", tc.kind, tc.name, got)
			}
			if diff := cmp.Diff(tc.want, *problem); diff != "" {
				t.Errorf("problem (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveKeepsTheStoreError(t *testing.T) {
	t.Parallel()
	broken := errors.New("disk on fire")
	r := NewRuntimes().WithStored(func(string, string) (*apiv1.TrainingRuntime, error) { return nil, broken })
	if _, problem := r.Resolve("", "torch-distributed"); problem != nil {
		t.Errorf("a built-in runtime with the store broken = %+v; the built-in one is still found", problem)
	}
	if err := r.Err(); !errors.Is(err, broken) {
		t.Errorf("Err() = %v, want the store's error, which the check returns", err)
	}
	var nilRuntimes *Runtimes
	if got, problem := nilRuntimes.Resolve("", "mpi"); problem != nil || got.Ref.Source != apiv1.RuntimeSourceBuiltin || nilRuntimes.Err() != nil {
		t.Errorf("a nil Runtimes resolves mpi to %+v, %+v; want the built-in one", got, problem)
	}
}

func TestMergeKeepsTheResolvedRuntime(t *testing.T) {
	t.Parallel()
	ref := &apiv1.ResolvedRuntimeRef{Kind: apiv1.KindTrainingRuntime, Name: "gone", Project: "ml", Version: 3, Source: apiv1.RuntimeSourceStored}
	rt := runtimeOf(apiv1.KindTrainingRuntime, "gone", 2, nil)
	task := apiv1.TrainTask{Runtime: "gone", Trainer: apiv1.Trainer{Command: []string{"/bin/true"}}, ResolvedRuntime: &rt.Spec, ResolvedRuntimeRef: ref}
	j, problems := Merge(&task, NewRuntimes())
	if len(problems) > 0 {
		t.Fatalf("Merge of a task with its resolved runtime, now deleted: %v", problems)
	}
	if j.NumNodes != 2 || !cmp.Equal(ref, j.Ref) {
		t.Errorf("merged %d nodes with ref %+v; want the resolved runtime's 2 and its ref", j.NumNodes, j.Ref)
	}
}
