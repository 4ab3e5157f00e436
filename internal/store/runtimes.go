package store

import (
	"context"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Runtimes keeps the training runtimes stored with kiln apply: each
// project's TrainingRuntimes and the ClusterTrainingRuntimes of every
// project, with every version of each, so that a run's record can name
// the version it used long after it changed or was deleted.
type Runtimes interface {
	// PutRuntime stores p.Runtime (its TypeMeta.Kind says which kind) as
	// the current version of its kind, project and name: version 1 for
	// the first, one more than the last for one whose metadata or spec
	// changed, or the current one again, changed false, for an identical
	// one. Versions keep counting after a delete. It returns the runtime
	// as stored, with its Status.
	PutRuntime(ctx context.Context, p PutRuntimeParams) (rt *apiv1.TrainingRuntime, changed bool, err error)
	// Runtime returns the current version of a runtime (k.Version 0), or
	// version k.Version, also of one deleted since; ErrNotFound if none.
	Runtime(ctx context.Context, k RuntimeKey) (*apiv1.TrainingRuntime, error)
	// ListRuntimes returns the current ClusterTrainingRuntimes and
	// project's TrainingRuntimes, by kind and then name.
	ListRuntimes(ctx context.Context, project string) ([]*apiv1.TrainingRuntime, error)
	// DeleteRuntime makes a runtime no longer current, so it is found by
	// name no more; its versions stay readable. ErrNotFound if none is
	// current. k.Version is ignored.
	DeleteRuntime(ctx context.Context, k RuntimeKey) error
}

// RuntimeKey names a stored runtime: a kind, a project (ignored, and
// kept empty, for a ClusterTrainingRuntime), a name and a version (0:
// the current one).
type RuntimeKey struct {
	Kind, Project, Name string
	Version             int64
}

// PutRuntimeParams is a runtime to store. The store keeps its kind,
// metadata and spec; its Status is the store's to set.
type PutRuntimeParams struct {
	// Project holds a TrainingRuntime; ignored for a ClusterTrainingRuntime.
	Project string
	Runtime *apiv1.TrainingRuntime
	// Now is when it is stored.
	Now time.Time
}

// RuntimeProject is the project a runtime of kind is kept under: project
// for a TrainingRuntime, none for a ClusterTrainingRuntime.
func RuntimeProject(kind, project string) string {
	if kind == apiv1.KindClusterTrainingRuntime {
		return ""
	}
	return project
}
