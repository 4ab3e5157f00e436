package local

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/resource"
)

// Layout of $KILN_HOME that the local backend owns:
//
//	supervisor.sock, supervisor.lock, supervisor.log
//	runs/<run>/_attempts.jsonl (the journal: journal.go)
//	runs/<run>/<task>/<attempt>/{stdout,stderr,*.times,outputs/}
//
// Attempts of homes from before the journal also have launch.json and
// status.json in their directory.

// attemptID is <run>/<task>/<number>. A child task's name is its
// parent's, a dot and its own (train.3, gen.prep, onExit.notify): dots
// only between names, so no part of an ID is "." or "..".
var attemptID = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?/[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*/[1-9][0-9]*$`)

// AttemptDir returns the directory of attempt id under home.
func AttemptDir(home string, id job.AttemptID) string {
	return filepath.Join(home, "runs", id.Run, id.Node, strconv.Itoa(id.Number))
}

// attemptDir is AttemptDir for an ID in its text form, checked first.
func attemptDir(home, id string) (string, error) {
	if err := checkID(id); err != nil {
		return "", err
	}
	return filepath.Join(home, "runs", filepath.FromSlash(id)), nil
}

func checkID(id string) error {
	if !attemptID.MatchString(id) {
		return fmt.Errorf("attempt ID %q is not <run>/<task>/<number>", id)
	}
	return nil
}

// SocketPath returns where the supervisor of home listens. Unix socket
// paths are limited to about 100 bytes, so a long home gets a socket in
// the temporary directory, named after a hash of home.
func SocketPath(home string) string {
	p := filepath.Join(home, "supervisor.sock")
	if len(p) < 100 {
		return p
	}
	sum := sha256.Sum256([]byte(home))
	return filepath.Join(os.TempDir(), "kiln-"+hex.EncodeToString(sum[:8])+".sock")
}

// launchRecord is recorded when an attempt's processes have started.
type launchRecord struct {
	PIDs []int `json:"pids"`
	// StartTicks are the processes' start times (ticks since boot, as
	// /proc gives them), or, where StartTicksUntil has a later tick, the
	// first tick each may have started in.
	StartTicks []uint64 `json:"startTicks"`
	// StartTicksUntil, if set, are the last ticks each process may have
	// started in: its fork spanned a tick (forkTicks).
	StartTicksUntil []uint64  `json:"startTicksUntil,omitempty"`
	Supervisor      string    `json:"supervisor"`
	StartedAt       time.Time `json:"startedAt"`
}

// started reports whether process i of the launch is the one started
// at ticks: a process of the same PID started at another time is not.
func (l *launchRecord) started(i int, ticks uint64) bool {
	if i >= len(l.StartTicks) || l.StartTicks[i] == 0 || ticks < l.StartTicks[i] {
		return false
	}
	if i < len(l.StartTicksUntil) {
		return ticks <= l.StartTicksUntil[i]
	}
	return ticks == l.StartTicks[i]
}

// statusRecord is recorded when an attempt has ended or could not start.
type statusRecord struct {
	ExitCode  int            `json:"exitCode"`
	Signal    string         `json:"signal,omitempty"`
	Failed    string         `json:"failed,omitempty"`
	Processes map[string]int `json:"processes,omitempty"`
	// StoppedProcesses are the processes the supervisor signalled.
	StoppedProcesses []string `json:"stoppedProcesses,omitempty"`
	// LeftRunning are the processes still running when the end was
	// recorded, left to end on their own.
	LeftRunning []string `json:"leftRunning,omitempty"`
	// Dropped are the processes an elastic gang outlived.
	Dropped []string `json:"dropped,omitempty"`
	// Running is set on a report of an elastic gang that lost a host and
	// runs on; such a report is never written as the attempt's status.
	Running    bool      `json:"running,omitempty"`
	Stopped    bool      `json:"stopped,omitempty"`
	System     bool      `json:"system,omitempty"`
	StartError string    `json:"startError,omitempty"`
	NotFound   bool      `json:"notFound,omitempty"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt"`
	// OOMKilled are the processes the kernel killed for using more than
	// their host's MemoryLimit (bytes).
	OOMKilled   []string `json:"oomKilled,omitempty"`
	MemoryLimit int64    `json:"memoryLimit,omitempty"`
	// LogsLost are the logs that could not be written whole, by file name
	// ("stdout", "<process>.stderr").
	LogsLost map[string]logLoss `json:"logsLost,omitempty"`
}

// jobStatus converts the record to what the engine sees, outputs not read.
func (r *statusRecord) jobStatus() job.Status {
	state := job.StateExited
	if r.Running {
		state = job.StateRunning
	}
	st := job.Status{
		State: state, ExitCode: r.ExitCode, Signal: r.Signal, Failed: r.Failed, Processes: r.Processes,
		StoppedProcesses: r.StoppedProcesses, LeftRunning: r.LeftRunning, Dropped: r.Dropped,
		Stopped: r.Stopped, System: r.System, StartError: r.StartError, NotFound: r.NotFound,
		StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, LogsLost: r.logsLost(),
	}
	if (r.ExitCode != 0 || r.Signal != "") && !r.Stopped && slices.Contains(r.OOMKilled, r.Failed) {
		st.Code = string(apiv1.CodeOOMKilled)
		st.Message = oomMessage(r.Failed, r.MemoryLimit)
	}
	return st
}

// logsLost lists the record's lost logs for the engine, by name.
func (r *statusRecord) logsLost() []job.LogLoss {
	var out []job.LogLoss
	for name, l := range r.LogsLost {
		out = append(out, job.LogLoss{Log: name, Bytes: l.Bytes, Cause: l.Cause})
	}
	slices.SortFunc(out, func(a, b job.LogLoss) int { return strings.Compare(a.Log, b.Log) })
	return out
}

// oomMessage says that process was killed for using more than limit bytes.
func oomMessage(process string, limit int64) string {
	const killed = "was killed by the kernel's out-of-memory killer (OOMKilled)"
	if process == "" {
		return fmt.Sprintf("the process %s: the task used more than its memory limit of %s (resources.memory)", killed, resource.FormatBytes(limit))
	}
	return fmt.Sprintf("process %s %s: its node used more than the memory limit of %s per node (resourcesPerNode.memory)", process, killed, resource.FormatBytes(limit))
}

// writeJSON writes v to path atomically: a reader sees the old file or the
// whole new one, even if this process dies halfway.
func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readJSON(path string, v any) (bool, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal(b, v)
}
