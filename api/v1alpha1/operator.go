package v1alpha1

// OperatorEnv gives the nodes of a runtime whose mlPolicy sets it the environment
// that Kubeflow training-operator's kubeflow.org/v1 controller for the
// policy's framework sets (PyTorchJob, TFJob, XGBoostJob, JAXJob,
// PaddleJob; an MPIJob's is kiln's own), in place of Trainer v2's: a job
// converted from one of those kinds (kiln convert) then runs its code
// unchanged. The nodes' processes are named after their replicas
// (master-0, worker-1), one per node, and node 0 is the leader the
// operator would wait for.
type OperatorEnv struct {
	// Leader is the replica type of node 0 when the job has one besides
	// its workers: Master (PyTorchJob, XGBoostJob), Chief or Master
	// (TFJob). Empty: every node is a Worker. A TFJob's parameter servers
	// are the policy's tensorflow.numPS.
	Leader string `json:"leader,omitempty"`
	// Replicas holds, by replica type (Master, Chief, Worker, PS), what
	// that type's processes run differently from the trainer, as the
	// operator lets each replica spec write its own container: its own
	// command and args, env and restart policy. Image, resources and pod
	// are the trainer's for every replica.
	Replicas map[string]OperatorReplica `json:"replicas,omitempty"`
}

// OperatorReplica is what one replica type of a training-operator job
// runs in place of the trainer's.
type OperatorReplica struct {
	// Command and Args, when either is set, replace the trainer's command
	// and args for this type's processes. Without a command (on both the
	// replica and the trainer) the process runs its image's entrypoint
	// with Args, which the kubernetes backend alone can do.
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env, when set, replaces the trainer's env for this type's processes.
	Env []EnvVar `json:"env,omitempty"`
	// RestartPolicy, when set, decides for a failure of this type's
	// processes in place of the job's policy for their replica group:
	// Never, OnFailure, Always or ExitCode (1-127 permanent, 128-255 and
	// signals restart the gang).
	RestartPolicy RestartPolicy `json:"restartPolicy,omitempty"`
}
