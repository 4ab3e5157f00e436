// Package v1 holds the jobs of Kubeflow training-operator's API group,
// kubeflow.org/v1 (PyTorchJob, TFJob, MPIJob, XGBoostJob, JAXJob,
// PaddleJob), with
// the field names and shapes the operator documents for users, so that a
// job written for the operator runs on kiln unchanged. kiln translates
// each into a TrainJob and the TrainingRuntime that gives its processes
// the environment the operator's controller would (internal/workflow,
// operator_*.go); kiln convert prints that translation.
//
// Only the user-facing fields are here, and nothing else is accepted: a
// field kiln does not know is an error, not silence. Status is the
// operator's to write and is dropped when a document is read.
package v1

// Group and version of the documents.
const (
	Group      = "kubeflow.org"
	APIVersion = Group + "/v1"
)

// Kinds of the group that kiln reads.
const (
	KindPyTorchJob = "PyTorchJob"
	KindTFJob      = "TFJob"
	KindMPIJob     = "MPIJob"
	KindXGBoostJob = "XGBoostJob"
	KindJAXJob     = "JAXJob"
	KindPaddleJob  = "PaddleJob"
)

// Replica types, the keys of a job's replica specs. The operator reads
// them in any case ("worker" is Worker); so does kiln.
const (
	ReplicaMaster    ReplicaType = "Master"
	ReplicaWorker    ReplicaType = "Worker"
	ReplicaChief     ReplicaType = "Chief"
	ReplicaPS        ReplicaType = "PS"
	ReplicaEvaluator ReplicaType = "Evaluator"
	ReplicaLauncher  ReplicaType = "Launcher"
)

// The container of a replica's pod that the operator configures, per
// kind; MPIJob's is the first container of the launcher (or mainContainer).
const (
	ContainerPyTorch    = "pytorch"
	ContainerTensorFlow = "tensorflow"
	ContainerXGBoost    = "xgboost"
	ContainerJAX        = "jax"
	ContainerPaddle     = "paddle"
)

// The named container port each kind's controller reads, and the port it
// defaults to.
const (
	PortNamePyTorch    = "pytorchjob-port"
	PortNameTensorFlow = "tfjob-port"
	PortNameXGBoost    = "xgboostjob-port"
	PortNameJAX        = "jaxjob-port"
	PortNamePaddle     = "master"
	PortPyTorch        = 23456
	PortTensorFlow     = 2222
	PortXGBoost        = 9999
	PortJAX            = 6666
	PortPaddle         = 36543
)

// ManagedByOperator is runPolicy.managedBy's value for the operator itself.
const ManagedByOperator = "kubeflow.org/training-operator"
