package v1alpha1

import "time"

// KindProjectQuota is the kind of a stored project quota.
const KindProjectQuota = "ProjectQuota"

// Preemption policies of a ProjectQuota.
const (
	// PreemptNever evicts nothing: a task waits until room comes back.
	PreemptNever = "Never"
	// PreemptLowerPriority lets a waiting task evict running attempts of
	// lower priority of its own project, and a project under its quota
	// reclaim what other projects borrowed.
	PreemptLowerPriority = "LowerPriority"
)

// ProjectQuota is a project's share of the machine, as Kueue's
// ClusterQueue (with its LocalQueue) is a namespace's: a nominal quota of
// cpu, memory and gpus, a limit on unfinished runs, a weight in fair
// sharing of spare capacity, and whether its tasks may preempt.
// metadata.name is the project.
type ProjectQuota struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Metadata   QuotaMetadata    `json:"metadata"`
	Spec       ProjectQuotaSpec `json:"spec"`
	// Status is kept by the server.
	Status ProjectQuotaStatus `json:"status,omitzero"`
}

// QuotaMetadata names the project a quota is for.
type QuotaMetadata struct {
	Name string `json:"name"`
}

// ProjectQuotaSpec is what a project may use. An unset quantity is not
// limited.
type ProjectQuotaSpec struct {
	// CPU, Memory and GPU are the nominal quota ("8", "500m"; "32Gi"; "2").
	CPU    Quantity `json:"cpu,omitempty"`
	Memory Quantity `json:"memory,omitempty"`
	GPU    Quantity `json:"gpu,omitempty"`
	// Runs limits the project's unfinished runs that have started; 0: no limit.
	Runs int `json:"runs,omitempty"`
	// Weight is the project's weight in fair sharing; default 1.
	Weight int `json:"weight,omitempty"`
	// Borrowing lets the project use spare capacity beyond its quota while
	// no other project needs it; default true.
	Borrowing *bool `json:"borrowing,omitempty"`
	// Preemption is Never (default) or LowerPriority.
	Preemption string `json:"preemption,omitempty"`
}

// ProjectQuotaStatus says when a quota was stored.
type ProjectQuotaStatus struct {
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// MayBorrow reports whether the quota lets its project borrow.
func (s ProjectQuotaSpec) MayBorrow() bool { return s.Borrowing == nil || *s.Borrowing }

// WeightOrDefault is the fair-sharing weight, 1 when unset.
func (s ProjectQuotaSpec) WeightOrDefault() int { return max(s.Weight, 1) }
