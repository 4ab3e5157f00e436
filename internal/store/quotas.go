package store

import (
	"context"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Quotas keeps the projects' quotas (ProjectQuota): what each project
// may take from the machine, its weight in fair sharing, and whether its
// tasks preempt. metadata.name is the project.
type Quotas interface {
	// PutQuota creates or replaces the quota of q.Metadata.Name, stored at
	// now. A replaced quota keeps its CreatedAt. It reports whether the
	// stored spec changed (true for a new one).
	PutQuota(ctx context.Context, q apiv1.ProjectQuota, now time.Time) (changed bool, err error)
	// GetQuota returns a project's quota, or ErrNotFound.
	GetQuota(ctx context.Context, project string) (*apiv1.ProjectQuota, error)
	// ListQuotas returns every quota, by project.
	ListQuotas(ctx context.Context) ([]apiv1.ProjectQuota, error)
	// DeleteQuota removes a project's quota, or returns ErrNotFound.
	DeleteQuota(ctx context.Context, project string) error
}
