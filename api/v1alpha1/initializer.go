package v1alpha1

// Initializer fetches a TrainJob's dataset and pre-trained model before
// its trainer starts, as Kubeflow Trainer's spec.initializer does. Each
// runs once per job, as a node of the job's run ("dataset-initializer",
// "model-initializer") that the trainer depends on.
type Initializer struct {
	// Dataset is fetched into $KILN_DATASET_DIR (locally) or
	// /workspace/dataset (kubernetes).
	Dataset *DatasetInitializer `json:"dataset,omitempty"`
	// Model is fetched into $KILN_MODEL_DIR (locally) or /workspace/model
	// (kubernetes).
	Model *ModelInitializer `json:"model,omitempty"`
}

// DatasetInitializer says where a job's dataset comes from.
type DatasetInitializer = SourceInitializer

// ModelInitializer says where a job's pre-trained model comes from.
type ModelInitializer = SourceInitializer

// SourceInitializer is one initializer: what to fetch and with what.
type SourceInitializer struct {
	// StorageURI is what to fetch: a local path or file:// URI (a file or
	// a directory, copied), or an http:// or https:// URI (a file,
	// downloaded). s3:// needs an artifact store; other schemes are refused.
	StorageURI *string `json:"storageUri,omitempty"`
	// Env is added to the initializer's process.
	Env []EnvVar `json:"env,omitempty"`
	// SecretRef names a kiln secret of the job's project (kiln secret
	// set); an http(s) download sends its value as a bearer token.
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
	// Image is the container image the initializer runs in on the
	// kubernetes backend; it must hold the kiln binary on its PATH.
	// Default: the job's spec.trainer.image.
	Image string `json:"image,omitempty"`
}

// LocalObjectReference names an object of the job's own project.
type LocalObjectReference struct {
	Name string `json:"name"`
}

// InitializeTask is a task that fetches a TrainJob's dataset or model.
// Kiln writes it when it compiles a TrainJob's spec.initializer.
type InitializeTask struct {
	// Name is "dataset" or "model": where the result goes.
	Name string `json:"name"`
	// SourceInitializer is what to fetch and how.
	SourceInitializer `json:",inline"`
}

// The names of a TrainJob's initializers and the tasks that run them.
const (
	InitializerDataset = "dataset"
	InitializerModel   = "model"
	// InitializerSuffix follows the name in the task's name:
	// "dataset-initializer".
	InitializerSuffix = "-initializer"
)
