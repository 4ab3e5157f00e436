package local

import (
	"time"

	"kiln.dev/kiln/internal/resource"
)

// The supervisor's RPC interface (net/rpc, gob over a unix socket).

// StartArgs asks for one attempt's processes.
type StartArgs struct {
	ID         string
	Processes  []ProcessArgs
	WorkingDir string
	Files      map[string]string
	Leader     string
	// Room is what the attempt was admitted with, if the engine admitted
	// it through this supervisor: it is held until the attempt ends.
	Room *resource.Request
}

// ProcessArgs is one process of an attempt.
type ProcessArgs struct {
	Name    string
	Command []string
	Env     []string
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
}

// ExitsArgs asks for exits after sequence number After, waiting up to Wait
// for the first one.
type ExitsArgs struct {
	After uint64
	Wait  time.Duration
}

// ExitsReply lists finished attempts. Instance changes when the supervisor
// restarts; Reset says exits were dropped and the caller must resync.
type ExitsReply struct {
	Instance string
	Seq      uint64
	Exits    []Exit
	Reset    bool
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

// HoldArgs takes room for an attempt found running.
type HoldArgs struct {
	Holder  string
	Request resource.Request
}

// NamesArgs names holders to release or waiters to withdraw.
type NamesArgs struct {
	Names []string
}
