package local

import (
	"time"

	"kiln.dev/kiln/internal/resource"
)

// The arguments and replies of the supervisor's calls. Launches and exits
// travel in frames of their own (proto.go); the other calls carry these as
// JSON in call and reply frames (served.go).

// StartArgs asks for one attempt's processes.
type StartArgs struct {
	ID         string
	Processes  []ProcessArgs
	WorkingDir string
	Files      map[string]string
	Leader     string
	// MinHosts makes the gang elastic: see job.Spec.MinHosts.
	MinHosts int
	// Room is the claim the attempt was admitted with, if the engine
	// admitted it through this supervisor: its room is held until the
	// attempt ends.
	Room *resource.Claim
	// Release names attempts whose room this one took over without asking
	// (see Pool.Hold): their room goes back once this one holds its own.
	Release []string
	// Sandbox, if set, isolates the attempt's processes.
	Sandbox *Sandbox
	// Leave lets members still running when the gang's end is decided end
	// on their own (cleanPodPolicy None); the end is recorded at once.
	Leave bool
	// Memory caps, in bytes, what the processes of each host use together
	// (the task's resources.memory), where the supervisor can make memory
	// cgroups; 0: no cap.
	Memory int64
}

// ProcessArgs is one process of an attempt.
type ProcessArgs struct {
	Name    string
	Command []string
	Env     []string
	// Host is the process's host index in the spec.
	Host int
}

// SignalArgs asks to stop an attempt's process group.
type SignalArgs struct {
	ID    string
	Grace time.Duration
}

// StateArgs asks about an attempt.
type StateArgs struct{ ID string }

// StateReply is what the supervisor knows of an attempt.
type StateReply struct {
	Running bool
	Exited  bool
	Lost    bool
	Status  statusRecord
	// Dropped names the members a running elastic gang outlived.
	Dropped []string
}

// ExitsArgs asks for exits after sequence number After, waiting up to Wait
// for the first one, or until the engine's standing in the ledger is no
// longer what Contended and Granted say.
type ExitsArgs struct {
	After     uint64
	Wait      time.Duration
	Contended bool
	Granted   uint64
}

// ExitsReply lists finished attempts. Instance changes when the supervisor
// restarts; Reset says exits were dropped and the caller must resync.
// Contended says whether another engine waits for room; Granted counts
// the grants of room to the engine's waiters (see resource.Ledger), and
// Unasked those it has not asked for yet.
type ExitsReply struct {
	Instance  string
	Seq       uint64
	Exits     []Exit
	Reset     bool
	Contended bool
	Granted   uint64
	Unasked   int
}

// Exit is one finished attempt and how it ended.
type Exit struct {
	ID     string
	Status statusRecord
}

// Empty is an empty argument or reply.
type Empty struct{}

// InfoReply identifies a supervisor process.
type InfoReply struct {
	Instance string
	PID      int
}

// AdmitArgs asks the supervisor's ledger to give back Release's room,
// then admit Claims within Capacity.
type AdmitArgs struct {
	Capacity resource.Request
	Release  []string
	Claims   []resource.Claim
}

// AdmitReply answers each claim of an AdmitArgs.
type AdmitReply struct {
	Answers []resource.Admission
}

// HoldArgs takes room for Holds, fit or not, then gives back Release's.
type HoldArgs struct {
	Holds   []resource.Claim
	Release []string
}

// NamesArgs names holders to release or waiters to withdraw.
type NamesArgs struct {
	Names []string
}

// QuotasArgs replaces the projects' quotas on the supervisor's ledger.
type QuotasArgs struct {
	Quotas map[string]resource.Quota
}
