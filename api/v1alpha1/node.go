package v1alpha1

// NodeKind is what a node of a workflow is, and so which handler runs it.
// A task's kind follows from the fields it sets: a train block makes it a
// training job, a command a process.
type NodeKind string

// The kinds of node kiln runs.
const (
	// NodeKindCommand runs one process.
	NodeKindCommand NodeKind = "command"
	// NodeKindTrain runs a distributed training job: a gang of processes
	// admitted whole, in the shape of a Kubeflow TrainJob.
	NodeKindTrain NodeKind = "train"
)
