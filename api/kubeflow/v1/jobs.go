package v1

import "encoding/json"

// PyTorchJob runs PyTorch distributed: a Master and Workers, or Workers
// alone (elastic).
type PyTorchJob struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta     `json:"metadata"`
	Spec     PyTorchJobSpec `json:"spec"`
	Status   Status         `json:"status,omitempty"`
}

// PyTorchJobSpec is what a PyTorchJob runs.
type PyTorchJobSpec struct {
	RunPolicy     RunPolicy      `json:"runPolicy,omitempty"`
	ElasticPolicy *ElasticPolicy `json:"elasticPolicy,omitempty"`
	// PyTorchReplicaSpecs has Master (at most one) and Worker.
	PyTorchReplicaSpecs ReplicaSpecs `json:"pytorchReplicaSpecs"`
	// NprocPerNode is a number, auto, cpu or gpu (default auto).
	NprocPerNode *string `json:"nprocPerNode,omitempty"`
}

// ElasticPolicy runs torchrun's elastic agent: between minReplicas and
// maxReplicas workers meet at a rendezvous.
type ElasticPolicy struct {
	MinReplicas  *int32     `json:"minReplicas,omitempty"`
	MaxReplicas  *int32     `json:"maxReplicas,omitempty"`
	RDZVBackend  *string    `json:"rdzvBackend,omitempty"`
	RDZVPort     *int32     `json:"rdzvPort,omitempty"`
	RDZVHost     *string    `json:"rdzvHost,omitempty"`
	RDZVID       *string    `json:"rdzvId,omitempty"`
	RDZVConf     []RDZVConf `json:"rdzvConf,omitempty"`
	Standalone   *bool      `json:"standalone,omitempty"`
	NProcPerNode *int32     `json:"nProcPerNode,omitempty"`
	MaxRestarts  *int32     `json:"maxRestarts,omitempty"`
	// Metrics drive a HorizontalPodAutoscaler (autoscaling/v2 MetricSpecs).
	Metrics json.RawMessage `json:"metrics,omitempty"`
}

// RDZVConf is one rendezvous option, key=value.
type RDZVConf struct {
	Key   string `json:"key,omitempty"`
	Value string `json:"value,omitempty"`
}

// TFJob runs TensorFlow: Chief (or Master), Workers, PS and Evaluator,
// each told the cluster by TF_CONFIG.
type TFJob struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta `json:"metadata"`
	Spec     TFJobSpec  `json:"spec"`
	Status   Status     `json:"status,omitempty"`
}

// TFJobSpec is what a TFJob runs.
type TFJobSpec struct {
	RunPolicy RunPolicy `json:"runPolicy,omitempty"`
	// SuccessPolicy is "" (the chief, or worker 0, decides) or AllWorkers.
	SuccessPolicy       *string      `json:"successPolicy,omitempty"`
	TFReplicaSpecs      ReplicaSpecs `json:"tfReplicaSpecs"`
	EnableDynamicWorker bool         `json:"enableDynamicWorker,omitempty"`
}

// MPIJob runs an MPI program: a Launcher runs mpirun over the Workers.
type MPIJob struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta `json:"metadata"`
	Spec     MPIJobSpec `json:"spec"`
	Status   Status     `json:"status,omitempty"`
}

// MPIJobSpec is what an MPIJob runs.
type MPIJobSpec struct {
	// SlotsPerWorker is the ranks per worker (default 1).
	SlotsPerWorker *int32 `json:"slotsPerWorker,omitempty"`
	// CleanPodPolicy is the deprecated place of runPolicy.cleanPodPolicy.
	CleanPodPolicy  *CleanPodPolicy `json:"cleanPodPolicy,omitempty"`
	MPIReplicaSpecs ReplicaSpecs    `json:"mpiReplicaSpecs"`
	// MainContainer names the workers' container mpirun runs in.
	MainContainer string    `json:"mainContainer,omitempty"`
	RunPolicy     RunPolicy `json:"runPolicy,omitempty"`
}

// XGBoostJob runs distributed XGBoost (or LightGBM): a Master and Workers.
type XGBoostJob struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta     `json:"metadata"`
	Spec     XGBoostJobSpec `json:"spec"`
	Status   Status         `json:"status,omitempty"`
}

// XGBoostJobSpec is what an XGBoostJob runs.
type XGBoostJobSpec struct {
	RunPolicy       RunPolicy    `json:"runPolicy,omitempty"`
	XGBReplicaSpecs ReplicaSpecs `json:"xgbReplicaSpecs"`
}

// JAXJob runs jax.distributed over Workers; worker 0 coordinates.
type JAXJob struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta `json:"metadata"`
	Spec     JAXJobSpec `json:"spec"`
	Status   Status     `json:"status,omitempty"`
}

// JAXJobSpec is what a JAXJob runs.
type JAXJobSpec struct {
	RunPolicy       RunPolicy    `json:"runPolicy,omitempty"`
	JAXReplicaSpecs ReplicaSpecs `json:"jaxReplicaSpecs"`
}

// PaddleJob runs PaddlePaddle: Workers alone (collective mode), or a
// Master beside them (parameter-server mode).
type PaddleJob struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta    `json:"metadata"`
	Spec     PaddleJobSpec `json:"spec"`
	Status   Status        `json:"status,omitempty"`
}

// PaddleJobSpec is what a PaddleJob runs.
type PaddleJobSpec struct {
	RunPolicy RunPolicy `json:"runPolicy,omitempty"`
	// ElasticPolicy scales the job between minReplicas and maxReplicas.
	ElasticPolicy      *PaddleElasticPolicy `json:"elasticPolicy,omitempty"`
	PaddleReplicaSpecs ReplicaSpecs         `json:"paddleReplicaSpecs"`
}

// PaddleElasticPolicy is a PaddleJob's elastic scaling.
type PaddleElasticPolicy struct {
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`
	// Metrics drive a HorizontalPodAutoscaler (autoscaling/v2 MetricSpecs).
	Metrics json.RawMessage `json:"metrics,omitempty"`
}
