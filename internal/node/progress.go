package node

import (
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/workflow"
)

// Progressor is implemented by kinds whose processes may report their own
// progress while they run, as a Kubeflow TrainJob's rank 0 reports its
// trainerStatus: to a small file in the attempt's output directory, which
// every isolation lets them write. The engine
// reads that file, at most every few seconds, through a backend that can
// (backend.FileReader), and hands what it read to Progress. Reports are
// best effort: a missing or bad file never fails the node.
type Progressor interface {
	// ProgressFile names the file node t's attempts report to, relative
	// to the attempt's output directory.
	ProgressFile(t *workflow.Task) string
	// Progress sets ns's reported progress from the file's content, read
	// at now, and reports whether that changed anything. Content that is
	// not a valid report changes nothing: the last good report stays.
	Progress(ns *apiv1.NodeStatus, data []byte, now time.Time) bool
}

// Announcer is implemented by kinds whose progress reports carry news that
// belongs in the run's events (a federated task's share that changed
// state at its party). After a report changed a node, the engine records
// one event for each line Announce returns.
type Announcer interface {
	Announce(before, after *apiv1.NodeStatus) []string
}
