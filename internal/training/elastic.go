package training

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// defaultMaxRestarts is torchrun's --max-restarts when an elastic policy
// sets none: enough for the agents to outlive a few lost nodes.
const defaultMaxRestarts = 3

// Elastic is a torch job's elastic policy with its defaults applied: the
// job runs on from MinNodes to MaxNodes nodes, one torchrun agent each.
type Elastic struct {
	MinNodes, MaxNodes, MaxRestarts int
}

// elasticPolicy returns p's torch elastic policy, or nil.
func elasticPolicy(p *apiv1.MLPolicy) *apiv1.ElasticPolicy {
	if p == nil || p.Torch == nil {
		return nil
	}
	return p.Torch.ElasticPolicy
}

// checkElastic adds the problems of a runtime's elastic policy: its
// numbers, and numNodes set beside it. Fields are relative to the runtime.
func (m *merger) checkElastic(rt *apiv1.TrainingRuntimeSpec) {
	e := elasticPolicy(rt.MLPolicy)
	if e == nil {
		return
	}
	const at = "mlPolicy.torch.elasticPolicy."
	m.count(at+"minNodes", e.MinNodes, 1, MaxReplicas)
	m.count(at+"maxNodes", e.MaxNodes, 1, MaxReplicas)
	m.count(at+"maxRestarts", e.MaxRestarts, 0, MaxReplicas)
	if e.MinNodes != nil && e.MaxNodes != nil && *e.MinNodes > *e.MaxNodes {
		m.add(apiv1.CodeElasticRange, at+"minNodes", "minNodes is %d, more than maxNodes %d: an elastic job runs on from minNodes to maxNodes nodes", *e.MinNodes, *e.MaxNodes)
	}
	if rt.MLPolicy.NumNodes != nil {
		m.add(apiv1.CodeElasticNumNodes, "mlPolicy.numNodes", "numNodes may not be set beside torch.elasticPolicy: minNodes and maxNodes size an elastic job")
	}
	if rt.Template != nil && rt.Template.NumNodes != nil {
		m.add(apiv1.CodeElasticNumNodes, "template.numNodes", "numNodes may not be set beside torch.elasticPolicy: minNodes and maxNodes size an elastic job")
	}
}

// elastic applies the runtime's elastic policy, if it has one, to j: its
// size is maxNodes, the job may not set numNodes, and its command must
// be torchrun. Fields are relative to the train task.
func (m *merger) elastic(t *apiv1.TrainTask, j *Job) {
	e := elasticPolicy(j.Policy)
	if e == nil {
		return
	}
	el := &Elastic{MinNodes: 1, MaxRestarts: defaultMaxRestarts}
	if e.MinNodes != nil {
		el.MinNodes = int(*e.MinNodes)
	}
	el.MaxNodes = el.MinNodes
	if e.MaxNodes != nil {
		el.MaxNodes = int(*e.MaxNodes)
	}
	if e.MaxRestarts != nil {
		el.MaxRestarts = int(*e.MaxRestarts)
	}
	if t.NumNodes != nil {
		m.add(apiv1.CodeElasticNumNodes, "numNodes", "numNodes may not be set: runtime %q sets torch.elasticPolicy, whose minNodes (%d) and maxNodes (%d) size the job", t.Runtime, el.MinNodes, el.MaxNodes)
	}
	if len(j.Command) > 0 && !isTorchrun(j.Command) {
		m.add(apiv1.CodeElasticCommand, "command", "command starts %q, not torchrun: an elastic job (runtime %q sets torch.elasticPolicy) runs one torchrun agent per node", j.Command[0], t.Runtime)
	}
	j.Elastic, j.NumNodes = el, el.MaxNodes
}

// NodesEnv names the variable that tells an elastic job's agents how
// many nodes the job had when each started: admission's pick for those
// started with the attempt; every node it had so far, itself included,
// for one that joined later. torch's world size, after each rendezvous,
// is the size the job trains at.
const NodesEnv = "KILN_NODES"

// buildElastic fills in one torchrun agent per admitted host, each with
// the c10d rendezvous torchrun reads from PET_*: node 0 hosts the
// rendezvous store on the job's port, and every agent accepts from
// minNodes to maxNodes peers, so those left after a loss meet again.
func buildElastic(j *Job, in *Input, spec *job.Spec) {
	e := j.Elastic
	endpoint := net.JoinHostPort(in.Network.Hosts[0], strconv.Itoa(in.Network.Ports[0]))
	id := strings.ReplaceAll(in.Attempt.String(), "/", "-")
	for n := range in.Network.Hosts {
		env := with(in.Env, "PET_RDZV_BACKEND", "c10d", "PET_RDZV_ENDPOINT", endpoint, "PET_RDZV_ID", id,
			"PET_NNODES", fmt.Sprintf("%d:%d", e.MinNodes, e.MaxNodes), "PET_MAX_RESTARTS", strconv.Itoa(e.MaxRestarts),
			"PET_NPROC_PER_NODE", strconv.Itoa(j.NumProcPerNode), NodesEnv, strconv.Itoa(len(in.Network.Hosts)))
		env = rdzvConf(env, n == 0)
		spec.Processes = append(spec.Processes, job.Process{Name: fmt.Sprintf("node-%d", n), Command: in.Command, Env: env, Host: n})
	}
	spec.MinHosts = e.MinNodes
}

// rdzvConf adds is_host to the rendezvous options (PET_RDZV_CONF, the
// user's kept): only node 0's agent hosts the store. Left to guess, every
// agent on one machine (the local backend's loopback) would try, and the
// store would live with whichever bound the port first.
func rdzvConf(env []string, host bool) []string {
	opt := "is_host=" + strconv.FormatBool(host)
	for k, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PET_RDZV_CONF="); ok {
			if v != "" {
				opt = v + "," + opt
			}
			env[k] = "PET_RDZV_CONF=" + opt
			return env
		}
	}
	return append(env, "PET_RDZV_CONF="+opt)
}
