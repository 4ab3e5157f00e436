package v1alpha1

import "time"

// NodeKindFederated is a task that runs at several parties (a workflow's
// spec.federation): on the initiator it coordinates the task's shares;
// each party runs its own share as a task of its part of the run.
const NodeKindFederated NodeKind = "federated"

// Federation makes a workflow federated, as FATE Flow's runtime conf does:
// its tasks run at the parties that fill the roles they list, each on its
// own kiln server, coordinated by the server the run was submitted to
// (the initiator).
type Federation struct {
	// Roles maps a role (guest, host, arbiter, or any DNS label) to the
	// registered parties that fill it, in order.
	Roles map[string][]string `json:"roles"`
	// AdmissionTimeout bounds how long a federated task waits for every
	// party to admit its share, all or nothing ("60s" by default). Past
	// it every share already held is given back and the task fails with
	// KLN-7011 naming the party and what it lacked.
	AdmissionTimeout string `json:"admissionTimeout,omitempty"`
	// PartyTimeout bounds how long a party may stay unreachable while
	// one of its shares runs ("60s" by default). Past it the party's
	// shares are failed with KLN-7012 and the run follows its failure
	// policy.
	PartyTimeout string `json:"partyTimeout,omitempty"`
}

// TaskOverride is what one role or one party changes in a federated
// task's share, as FATE components take role parameters.
type TaskOverride struct {
	// Args replace the task's args.
	Args []string `json:"args,omitempty"`
	// Env adds to the task's env; a variable of the same name replaces it.
	Env []EnvVar `json:"env,omitempty"`
	// Resources replace the task's resources.
	Resources *Resources `json:"resources,omitempty"`
}

// PartyShare is one party's share of a federated task, as the initiator
// last saw it.
type PartyShare struct {
	// Party runs the share, as Role.
	Party string `json:"party"`
	Role  string `json:"role"`
	// Task is the share's task in the party's part of the run.
	Task string `json:"task"`
	// Attempt is the attempt of the federated task the share belongs to.
	Attempt int `json:"attempt,omitempty"`
	// State is where the share is: Pending, Reserving, Reserved, Running,
	// Succeeded, Failed, Released (given back unused), Stopped (stopped by
	// the initiator while it ran) or Unreachable.
	State string `json:"state"`
	// Code and Message say why a share failed, waits or was given back.
	Code    Code   `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	// Address is where the share's processes meet their peers.
	Address string `json:"address,omitempty"`
	// SeenAt is when the initiator last heard from the party.
	SeenAt *time.Time `json:"seenAt,omitempty"`
}

// Share states.
const (
	SharePending     = "Pending"
	ShareReserving   = "Reserving"
	ShareReserved    = "Reserved"
	ShareRunning     = "Running"
	ShareSucceeded   = "Succeeded"
	ShareFailed      = "Failed"
	ShareReleased    = "Released"
	ShareStopped     = "Stopped"
	ShareUnreachable = "Unreachable"
)

// FederationInfo says, on a run, how it takes part in a federation: on
// the initiator the whole run, on each party its part.
type FederationInfo struct {
	// Initiator is the party that coordinates the run.
	Initiator string `json:"initiator"`
	// Party is the server's own party; Run is the federated run's ID,
	// the same at every party.
	Party string `json:"party"`
	Run   RunID  `json:"run"`
	// Roles are the workflow's roles and their parties.
	Roles map[string][]string `json:"roles"`
	// Part is set on a party's part of a federated run: its tasks are
	// the party's shares, and each attempt starts only when the initiator
	// orders it.
	Part bool `json:"part,omitempty"`
	// Shares names, on a part, which task and role each of its tasks is
	// a share of.
	Shares []ShareRef `json:"shares,omitempty"`
	// Inputs are, on a part, the output parameters of other parties'
	// shares that its shares read: each is fetched from its party when
	// the share starts.
	Inputs []CrossInput `json:"inputs,omitempty"`
	// Exports are, on a part, its shares' output parameters that may
	// leave the party, by SHARE.PARAM, with the roles they may go to.
	Exports map[string][]string `json:"exports,omitempty"`
}

// PartOutput is an output parameter of a party's share, as the party
// hands it to another party of the run that the workflow sends it to.
type PartOutput struct {
	Value string `json:"value"`
}

// CrossInput is an output parameter of another party's share that a
// share of a part reads ({{tasks.Task.outputs.parameters.Param}}).
type CrossInput struct {
	// Share is the reading share, by its name in the part.
	Share string `json:"share"`
	// Task and Param name the output; Party and Role the one share of
	// Task, which has it.
	Task  string `json:"task"`
	Param string `json:"param"`
	Party string `json:"party"`
	Role  string `json:"role"`
	// Artifact is set when the output is an artifact named Param (a
	// file), which the reading share reads at a path of its party's.
	Artifact bool `json:"artifact,omitempty"`
}

// Key is how a part's templates name the input: {{federation.KEY}}.
func (c CrossInput) Key() string {
	if c.Artifact {
		return c.Task + ".artifacts." + c.Param
	}
	return c.Task + "." + c.Param
}

// ShareRef is one share of a federated task: the task Task of the
// federated workflow, run by Party as Role, as the task Name of Party's
// part.
type ShareRef struct {
	Task  string `json:"task"`
	Party string `json:"party"`
	Role  string `json:"role"`
	Name  string `json:"name"`
}

// PartID is the ID of party's part of federated run id, the same on
// every server: "<run>-<party>" (a run's ID is a DNS label, as backends
// name files and objects after it).
func PartID(id RunID, party string) RunID { return RunID(string(id) + "-" + party) }

// The messages parties exchange (the /api/v1/federation routes). Every
// one is idempotent: sent twice, it does what it did once.

// PartRequest asks a party to create its part of a federated run. The
// party derives its part from the whole workflow itself.
type PartRequest struct {
	// Run is the federated run's ID.
	Run RunID `json:"run"`
	// Initiator is the party that sends it.
	Initiator string `json:"initiator"`
	// Workflow is the federated workflow as submitted, and Params its
	// parameters' values.
	Workflow *Workflow         `json:"workflow"`
	Params   map[string]string `json:"params,omitempty"`
	// RerunOf is the federated run this one reruns, if any; Preset says
	// which of its tasks the rerun does not run: Succeeded (reused, each
	// party reuses its own share of the source run) or Skipped (left out).
	RerunOf RunID            `json:"rerunOf,omitempty"`
	Preset  map[string]Phase `json:"preset,omitempty"`
}

// PartStatus is a party's part of a federated run as it stands there.
type PartStatus struct {
	// Run is the federated run; Part the part's own run ID at the party.
	Run  RunID `json:"run"`
	Part RunID `json:"part"`
	// Party is the party that answers.
	Party string `json:"party"`
	// Phase is the part's phase.
	Phase Phase `json:"phase"`
	// Shares are the part's tasks, by task name.
	Shares map[string]ShareStatus `json:"shares"`
}

// ShareStatus is one share as the party that runs it sees it.
type ShareStatus struct {
	// Task is the share's task in the part.
	Task string `json:"task"`
	// Attempt is the latest attempt the initiator ordered (0: none yet).
	Attempt int `json:"attempt"`
	// State is one of the Share states.
	State string `json:"state"`
	// Phase is the share's task's phase in the part.
	Phase Phase `json:"phase"`
	// Code and Message say why it failed or waits.
	Code    Code   `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	// Address is where the attempt's processes meet their peers, once
	// reserved.
	Address string `json:"address,omitempty"`
	// Outcome is the phase the ordered attempt ended in (Succeeded or
	// Failed), once it ended; System says the machine failed, not the task.
	Outcome   Phase `json:"outcome,omitempty"`
	System    bool  `json:"system,omitempty"`
	Permanent bool  `json:"permanent,omitempty"`
}

// ShareOrder is what the initiator wants of one share, level-based: the
// latest order for an attempt wins, and sending it again changes nothing.
type ShareOrder struct {
	// Attempt is the attempt of the federated task (1 for the first).
	Attempt int `json:"attempt"`
	// Action is reserve, start, release, abort or skip.
	Action string `json:"action"`
	// Peers are the other shares of the attempt and where they meet (with
	// start).
	Peers []Peer `json:"peers,omitempty"`
	// Reason says why (with release, abort and skip).
	Reason string `json:"reason,omitempty"`
}

// Share order actions.
const (
	// OrderReserve asks the party to admit the attempt's share and hold
	// its room, and to pick where it will meet its peers.
	OrderReserve = "reserve"
	// OrderStart starts the reserved share.
	OrderStart = "start"
	// OrderRelease gives back a reservation that will not start.
	OrderRelease = "release"
	// OrderAbort stops a started share whose attempt failed elsewhere.
	OrderAbort = "abort"
	// OrderSkip ends a share whose task will not run (skipped, or the
	// run ended first).
	OrderSkip = "skip"
	// OrderFail ends a share that will not run again because the
	// federated run failed: the share fails too, whether it ran or not.
	OrderFail = "fail"
)

// Peer is one share of a federated attempt, where its processes listen.
type Peer struct {
	Party   string `json:"party"`
	Role    string `json:"role"`
	Task    string `json:"task"`
	Address string `json:"address"`
}
