package v1alpha1

// Kinds of the training resources.
const (
	KindTrainJob        = "TrainJob"
	KindTrainingRuntime = "TrainingRuntime"
)

// TrainJob is a distributed training job: a trainer (command, nodes,
// processes per node, resources) run with a TrainingRuntime's policies.
type TrainJob struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta   `json:"metadata"`
	Spec     TrainJobSpec `json:"spec"`
}

// TrainJobSpec is what a TrainJob runs.
type TrainJobSpec struct {
	// RuntimeRef names the TrainingRuntime: a built-in one (kiln get
	// runtimes) or one defined in the files submitted with the job.
	RuntimeRef RuntimeRef `json:"runtimeRef"`
	// Trainer overrides the runtime's template.
	Trainer *Trainer `json:"trainer,omitempty"`
	// RunPolicy bounds restarts and time.
	RunPolicy *RunPolicy `json:"runPolicy,omitempty"`
	// Suspend, when true, creates the job without starting it; kiln
	// unsuspend starts it. Default false.
	Suspend *bool `json:"suspend,omitempty"`
	// Priority orders admission against other jobs and tasks (default 0);
	// see Task.Priority.
	Priority int32 `json:"priority,omitempty"`
	// PodTemplate shapes the job's pods on the kubernetes backend.
	PodTemplate *PodTemplate `json:"podTemplate,omitempty"`
	// Initializer fetches the dataset and model before the trainer starts.
	Initializer *Initializer `json:"initializer,omitempty"`
}

// RuntimeRef names a TrainingRuntime.
type RuntimeRef struct {
	Name string `json:"name"`
	// Kind is TrainingRuntime or ClusterTrainingRuntime; empty looks the
	// name up in the files, the project's runtimes, the stored cluster
	// ones and the built-in ones, in that order (see RuntimeSource).
	Kind string `json:"kind,omitempty"`
	// APIGroup is kiln.dev or trainer.kubeflow.org; empty is either.
	APIGroup string `json:"apiGroup,omitempty"`
}

// Trainer is the job's processes.
type Trainer struct {
	// Command and Args run on every node (templates allowed in a workflow).
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env is added to every process. Names the framework sets are reserved.
	Env []EnvVar `json:"env,omitempty"`
	// NumNodes overrides the runtime's mlPolicy.numNodes (default 1).
	NumNodes *int32 `json:"numNodes,omitempty"`
	// NumProcPerNode is a number, or "auto" (GPUs per node if any, else
	// the node's CPUs), "cpu" or "gpu". Torch and MPI read it.
	NumProcPerNode *Quantity `json:"numProcPerNode,omitempty"`
	// ResourcesPerNode is what each node takes from the pool; default one
	// CPU per process.
	ResourcesPerNode *Resources `json:"resourcesPerNode,omitempty"`
	// Image is the container image of every node on the kubernetes backend.
	Image string `json:"image,omitempty"`
}

// RunPolicy bounds a job's restarts and time.
type RunPolicy struct {
	// BackoffLimit is how often the whole gang restarts after a failure (default 0).
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`
	// ActiveDeadlineSeconds bounds the job, restarts included.
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
	// TTLSecondsAfterFinished deletes the job's run (records, logs and
	// outputs) this many seconds after it finished, as a workflow's
	// spec.ttlSecondsAfterFinished does.
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
	// JobPolicy holds cleanPodPolicy, restartPolicy and per-group overrides.
	JobPolicy `json:",inline"`
}

// TrainTask is a TrainJob run as one node of a workflow.
type TrainTask struct {
	// Runtime names the TrainingRuntime.
	Runtime string `json:"runtime"`
	Trainer `json:",inline"`
	// RuntimeKind limits the lookup of Runtime to one kind, as a
	// TrainJob's runtimeRef.kind does; empty: any, in lookup order.
	RuntimeKind string `json:"runtimeKind,omitempty"`
	// ResolvedRuntime is the runtime as resolved at submit time; kiln sets
	// it so a resumed run uses exactly the runtime it started with.
	ResolvedRuntime *TrainingRuntimeSpec `json:"resolvedRuntime,omitempty"`
	// ResolvedRuntimeRef says which runtime and version ResolvedRuntime is.
	ResolvedRuntimeRef *ResolvedRuntimeRef `json:"resolvedRuntimeRef,omitempty"`
	// Policy is how the gang is cleaned up and restarted.
	Policy *JobPolicy `json:"policy,omitempty"`
	// Initializers names the initializers ("dataset", "model") whose
	// results the trainer reads; the task depends on their tasks.
	Initializers []string `json:"initializers,omitempty"`
}

// TrainingRuntime is a reusable blueprint for TrainJobs.
type TrainingRuntime struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta          `json:"metadata"`
	Spec     TrainingRuntimeSpec `json:"spec"`
	// Status is where a listed or stored runtime comes from; kiln sets it.
	Status *RuntimeStatus `json:"status,omitempty"`
}

// TrainingRuntimeSpec holds a runtime's policies and defaults.
type TrainingRuntimeSpec struct {
	// MLPolicy picks the framework and the default number of nodes. Required.
	MLPolicy *MLPolicy `json:"mlPolicy,omitempty"`
	// GangPolicy bounds how long a job may wait to be admitted whole.
	GangPolicy *GangPolicy `json:"gangPolicy,omitempty"`
	// Template gives defaults the TrainJob's trainer overrides.
	Template *Trainer `json:"template,omitempty"`
	// FailurePolicy says which failures restart the gang.
	FailurePolicy *FailurePolicy `json:"failurePolicy,omitempty"`
	// PodTemplate shapes the pods of the jobs that use the runtime on the
	// kubernetes backend (the local backend ignores it); a job's own pod
	// template is merged over it, lists by name as kubectl apply merges them.
	PodTemplate *PodTemplate `json:"podTemplate,omitempty"`
}

// MLPolicy is the framework of a runtime: exactly one of its sources is set.
type MLPolicy struct {
	// NumNodes is the default number of nodes (default 1).
	NumNodes   *int32            `json:"numNodes,omitempty"`
	Torch      *TorchPolicy      `json:"torch,omitempty"`
	MPI        *MPIPolicy        `json:"mpi,omitempty"`
	XGBoost    *XGBoostPolicy    `json:"xgboost,omitempty"`
	TensorFlow *TensorFlowPolicy `json:"tensorflow,omitempty"`
	JAX        *JAXPolicy        `json:"jax,omitempty"`
	Plain      *PlainPolicy      `json:"plain,omitempty"`
	// Paddle runs PaddlePaddle's collective training as training-operator's
	// PaddleJob does (it sets trainingOperator's environment).
	Paddle *PaddlePolicy `json:"paddle,omitempty"`
	// TrainingOperator sets training-operator's environment instead of Trainer v2's.
	TrainingOperator *OperatorEnv `json:"trainingOperator,omitempty"`
}

// TorchPolicy configures PyTorch distributed.
type TorchPolicy struct {
	// NumProcPerNode default: "auto".
	NumProcPerNode *Quantity `json:"numProcPerNode,omitempty"`
	// ElasticPolicy, when set, makes the job elastic (see ElasticPolicy).
	ElasticPolicy *ElasticPolicy `json:"elasticPolicy,omitempty"`
}

// MPIPolicy configures MPI (OpenMPI).
type MPIPolicy struct {
	// NumProcPerNode is the slots per node (default 1).
	NumProcPerNode *int32 `json:"numProcPerNode,omitempty"`
}

// XGBoostPolicy configures distributed XGBoost (rabit/collective).
type XGBoostPolicy struct{}

// TensorFlowPolicy configures TF_CONFIG: node 0 is the chief, the other
// nodes are workers, and NumPS parameter servers run beside them.
type TensorFlowPolicy struct {
	NumPS *int32 `json:"numPS,omitempty"`
}

// JAXPolicy configures jax.distributed: one process per node.
type JAXPolicy struct{}

// PlainPolicy runs the nodes with no framework environment.
type PlainPolicy struct{}

// PaddlePolicy configures PaddlePaddle's collective mode: one process per
// node, which paddle.distributed.launch finds through PADDLE_MASTER,
// PADDLE_NNODES and PADDLE_JOB_ID, as training-operator's PaddleJob
// controller sets them.
type PaddlePolicy struct{}

// GangPolicy bounds gang admission.
type GangPolicy struct {
	// ScheduleTimeoutSeconds fails a job that could not be admitted whole
	// within this time. Default: wait as long as it takes.
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
	// Scheduler is the gang scheduler that places the job's pods on a
	// cluster, as Kubeflow Trainer's podGroupPolicy picks it: the
	// kubernetes backend gives each attempt its PodGroup. "coscheduling"
	// (scheduler-plugins) or "volcano"; empty (the default) leaves it to
	// the backend's gangScheduler setting. Local runs ignore it: kiln's
	// own pool admits a gang whole.
	Scheduler string `json:"scheduler,omitempty"`
}

// Gang schedulers a GangPolicy can name.
const (
	GangSchedulerCoscheduling = "coscheduling"
	GangSchedulerVolcano      = "volcano"
)

// FailurePolicy says which failures restart a gang.
type FailurePolicy struct {
	// MaxRestarts is how often a job of the runtime restarts its gang when
	// the job sets no backoffLimit (Kubeflow Trainer's JobSet
	// failurePolicy.maxRestarts). Default 0.
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`
	// RetryableExitCodes restart the gang (within backoffLimit); any other
	// exit fails the job at once. Empty: every failure may restart.
	RetryableExitCodes []int32 `json:"retryableExitCodes,omitempty"`
}
