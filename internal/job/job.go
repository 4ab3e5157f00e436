// Package job is the contract between the engine and backends: what to run
// for one attempt (Spec) and what became of it (Status). It holds types
// only and imports nothing of kiln.
package job

import "time"

// Spec is one attempt, ready to run. The same attempt always gives the same
// Spec, so a restarted engine asks for exactly what it asked for before.
type Spec struct {
	// ID is the attempt's deterministic ID, "<run>/<task>/<number>".
	// Backends name everything they create after it.
	ID string
	// Command is the program and its arguments, templates expanded. It is
	// run directly, never through a shell.
	Command []string
	// Env is the full environment as KEY=VALUE pairs. The backend adds
	// KILN_OUTPUTS.
	Env []string
	// WorkingDir is where the process starts; empty means the attempt's
	// own directory.
	WorkingDir string
	// Outputs are the names of the output parameters to read back when the
	// attempt succeeds.
	Outputs []string
}

// State is what a backend knows of an attempt.
type State int

// States of an attempt as a backend sees it.
const (
	// StateUnknown: the backend never started this attempt.
	StateUnknown State = iota
	// StateRunning: its process is running.
	StateRunning
	// StateExited: it finished; Status says how.
	StateExited
	// StateLost: it was started, but nobody can tell how it ended (its
	// supervisor died). Whatever was left of it has been stopped.
	StateLost
)

// Status is the observed state of one attempt.
type Status struct {
	State State
	// ExitCode is the process's exit status; -1 if it was killed by a signal
	// or never started.
	ExitCode int
	// Signal names the signal that ended the process, if one did.
	Signal string
	// StartError says why the process could not be started; NotFound is
	// set when its command does not exist.
	StartError string
	NotFound   bool
	// StartedAt and FinishedAt are the process's times.
	StartedAt, FinishedAt time.Time
	// Outputs are the output parameters read back after a successful exit.
	Outputs map[string]string
	// OutputError says why an output could not be read.
	OutputError string
}

// Succeeded reports whether the attempt exited 0 and its outputs were read.
func (s *Status) Succeeded() bool {
	return s.State == StateExited && s.ExitCode == 0 && s.StartError == "" && s.OutputError == ""
}
