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
	// NodeKindInitializer fetches a training job's dataset or model.
	NodeKindInitializer NodeKind = "initializer"
	// NodeKindMap runs its task once per item of a list, as children.
	NodeKindMap NodeKind = "map"
	// NodeKindDynamic runs a command that writes a workflow fragment, then
	// runs the fragment as children.
	NodeKindDynamic NodeKind = "dynamic"
	// NodeKindSubworkflow runs another workflow's tasks as children.
	NodeKindSubworkflow NodeKind = "subworkflow"
	// NodeKindGate waits for an approval, a time or a signal.
	NodeKindGate NodeKind = "gate"
	// NodeKindSensor waits for something outside the run: a file.
	NodeKindSensor NodeKind = "sensor"
	// NodeKindExit is the node that runs a workflow's onExit tasks, as
	// children, once every other task has ended.
	NodeKindExit NodeKind = "exit"
)
