package v1alpha1

// ElasticPolicy makes a PyTorch job elastic, as Kubeflow Trainer v2.1's
// mlPolicy.torch.elasticPolicy and training-operator's PyTorchJob
// elasticPolicy do: the job starts with as many nodes as admission can
// give, from MinNodes to MaxNodes, every node's torchrun agent meets the
// others through torch's c10d rendezvous on node 0, and the job goes on
// when it loses nodes, as long as MinNodes are left. With an elastic
// policy the job's size comes from it alone: numNodes may not be set in
// the runtime (mlPolicy.numNodes, template.numNodes) nor in the job
// (trainer.numNodes), as Trainer v2.1 requires, and the command must be
// torchrun (or python -m torch.distributed.run).
type ElasticPolicy struct {
	// MinNodes is the fewest nodes the job starts with and runs on; below
	// it the job fails. From 1; default 1.
	MinNodes *int32 `json:"minNodes,omitempty"`
	// MaxNodes is the most nodes the job runs on; admission tries it
	// first. At least MinNodes; default MinNodes.
	MaxNodes *int32 `json:"maxNodes,omitempty"`
	// MaxRestarts is torchrun's --max-restarts: how often each node's
	// agent restarts its workers (after a node was lost, say) before it
	// gives up. From 0; default 3, so that a lost node can be outlived.
	// The gang's own restarts are still runPolicy.backoffLimit.
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`
}
