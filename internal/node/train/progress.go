package train

import (
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/workflow"
)

var _ node.Progressor = Handler{}

// ProgressFile implements node.Progressor.
func (Handler) ProgressFile(*workflow.Task) string { return node.ProgressFile }

// Progress implements node.Progressor with node.ReportProgress: a
// report in the shape of Kubeflow Trainer's trainerStatus.
func (Handler) Progress(ns *apiv1.NodeStatus, data []byte, now time.Time) bool {
	return node.ReportProgress(ns, data, now)
}

// completed marks a job that succeeded after reporting progress as done:
// 100 percent, nothing left.
func completed(ns *apiv1.NodeStatus, now time.Time) {
	ts := ns.TrainerStatus
	if ts == nil {
		return
	}
	hundred, zero := int32(100), int32(0)
	ts.ProgressPercentage, ts.EstimatedRemainingSeconds, ts.LastUpdatedTime = &hundred, &zero, now
}
