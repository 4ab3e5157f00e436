package v1alpha1

// OperatorEnv gives the nodes of a runtime whose mlPolicy sets it the environment
// that Kubeflow training-operator's kubeflow.org/v1 controller for the
// policy's framework sets (PyTorchJob, TFJob, XGBoostJob, JAXJob; an
// MPIJob's is kiln's own), in place of Trainer v2's: a job converted from
// one of those kinds (kiln convert) then runs its code unchanged. The
// nodes' processes are named after their replicas (master-0, worker-1),
// one per node, and node 0 is the leader the operator would wait for.
type OperatorEnv struct {
	// Leader is the replica type of node 0 when the job has one besides
	// its workers: Master (PyTorchJob, XGBoostJob), Chief or Master
	// (TFJob). Empty: every node is a Worker. A TFJob's parameter servers
	// are the policy's tensorflow.numPS.
	Leader string `json:"leader,omitempty"`
}
