package v1alpha1

// RunArtifact is one output artifact a task of a run stored in the
// artifact repository (see NodeStatus.Artifacts).
type RunArtifact struct {
	// Node is the task that wrote it.
	Node string `json:"node"`
	CachedArtifact
}

// RunArtifactList is the answer of GET /api/v1/runs/{id}/artifacts: every
// stored artifact of the run's tasks, by task then name.
type RunArtifactList struct {
	Items []RunArtifact `json:"items"`
}
