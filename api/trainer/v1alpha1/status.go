package v1alpha1

import (
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Condition types of a TrainJob, as Trainer sets them.
const (
	ConditionSuspended = "Suspended"
	ConditionComplete  = "Complete"
	ConditionFailed    = "Failed"
)

// TrainJobStatus is a TrainJob's status in Trainer's shape.
type TrainJobStatus struct {
	Conditions    []Condition          `json:"conditions,omitempty"`
	JobsStatus    []JobStatus          `json:"jobsStatus,omitempty"`
	TrainerStatus *apiv1.TrainerStatus `json:"trainerStatus,omitempty"`
}

// Condition is a Kubernetes condition.
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
}

// JobStatus counts the child jobs of one replicated job (each runs once).
type JobStatus struct {
	Name      string `json:"name"`
	Ready     int32  `json:"ready"`
	Succeeded int32  `json:"succeeded"`
	Failed    int32  `json:"failed"`
	Active    int32  `json:"active"`
	Suspended int32  `json:"suspended"`
}
