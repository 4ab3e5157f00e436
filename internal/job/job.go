// Package job is the contract between the engine and backends: what to run
// for one attempt (Spec) and what became of it (Status). It holds types
// only and imports nothing of kiln.
package job

import "time"

// Spec is one attempt, ready to run: a task's single process, or the gang
// of processes of a distributed training job, which start together and end
// together. The same attempt always gives the same Spec, so a restarted
// engine asks for exactly what it asked for before.
type Spec struct {
	// ID is the attempt's deterministic ID. Backends name everything they
	// create after it.
	ID AttemptID
	// Processes are started together. When one fails, the backend stops
	// the others: a gang lives and dies as one.
	Processes []Process
	// WorkingDir is where the processes start; empty means the attempt's
	// own directory.
	WorkingDir string
	// Files are written to the attempt's directory before any process
	// starts (an MPI hostfile, say), keyed by file name.
	Files map[string]string
	// Outputs are the names of the output parameters to read back when the
	// attempt succeeds.
	Outputs []string
	// Artifacts are the paths, relative to the output directory, of the
	// files the attempt declared it writes. An attempt that exits 0
	// without one of them has an OutputError.
	Artifacts []string
	// Leader, if set, names the one process whose exit decides the
	// attempt's (MPI's launcher); the others are stopped when it ends.
	Leader string
	// MinHosts, when above 0, makes the gang elastic (torchrun agents
	// that meet again after a loss): a process that fails takes the gang
	// down only when it leaves fewer than MinHosts hosts with a process
	// that has not failed. See Decide.
	MinHosts int
	// Container says how to run the processes in containers, for backends
	// that do (kubernetes); others ignore it.
	Container Container
	// SecretEnv names the environment variables whose values are secrets,
	// for backends that keep them apart (a Kubernetes Secret).
	SecretEnv []string
	// Project is the project the attempt's run belongs to; backends that
	// isolate tasks keep projects apart by it.
	Project string
	// Clean says which processes are stopped once the attempt's end is
	// decided while some still run (a training job's cleanPodPolicy).
	Clean Clean `json:",omitempty"`
	// Workspace, if set, is a directory shared by the attempts of one run
	// (a training job's initializers and trainer). Local processes already
	// read host paths from their environment; container backends mount
	// the run's shared volume at WorkspaceDir and point each variable of
	// Dirs at its subdirectory there.
	Workspace *Workspace `json:",omitempty"`
	// Federated, if set, makes the attempt a federated task's: its shares
	// run at other kiln servers (parties), and no process runs here.
	Federated *Federated `json:",omitempty"`
	// Store, if set, makes the attempt's own processes fetch their input
	// artifacts from an S3 artifact repository and store their outputs
	// there (kiln artifact-exec), for backends whose outputs kiln cannot
	// read on its own machine. The keys are in the processes' Env,
	// named in SecretEnv.
	Store *ArtifactStore `json:",omitempty"`
}

// ArtifactStore is the S3 artifact repository an attempt's processes
// fetch from and store to, and what they move.
type ArtifactStore struct {
	Endpoint, Bucket, Prefix, Region string
	Insecure                         bool
	// Inputs is the JSON list of artifacts to place before the command
	// starts (kiln artifact-exec's KILN_ARTIFACT_INPUTS); Outputs the
	// JSON list of output artifacts to store when it succeeds
	// (KILN_ARTIFACT_OUTPUTS). Empty: none.
	Inputs, Outputs string
}

// Federated is what a federated attempt runs at the parties.
type Federated struct {
	// Task is the federated task's name.
	Task string
	// Shares are its shares, one per party and role.
	Shares []Share
	// AdmissionTimeout bounds how long every share may take to be
	// admitted; PartyTimeout how long a party may stay unreachable.
	AdmissionTimeout, PartyTimeout time.Duration
}

// Share is one party's share of a federated task: the task Name of the
// party's part, run as Role.
type Share struct {
	Party, Role, Name string
}

// Clean is what a backend does with an attempt's processes that still
// run when its end is decided.
type Clean string

// Clean policies of an attempt.
const (
	// CleanRunning stops them (and on a container backend deletes their
	// pods); processes that ended keep their logs. The default ("").
	CleanRunning Clean = ""
	// CleanNone lets them end on their own; their logs are still kept.
	// The attempt's end is recorded at once. A later attempt of the same
	// node stops them before it starts.
	CleanNone Clean = "None"
	// CleanAll stops them, and a container backend deletes every pod of
	// the attempt, finished ones too, once its end is recorded.
	CleanAll Clean = "All"
)

// WorkspaceDir is where container backends mount a run's workspace.
const WorkspaceDir = "/workspace"

// Workspace is a run's shared directory as one attempt uses it.
type Workspace struct {
	// Dirs maps an environment variable to the subdirectory of the
	// workspace it names ("KILN_DATASET_DIR": "dataset").
	Dirs map[string]string
}

// Container is what a container backend needs beyond the processes.
type Container struct {
	// Image every process runs in.
	Image string
	// WorkingDir is the task's working directory as written (templates
	// expanded), inside the container; empty keeps the image's.
	WorkingDir string
	// Resources of each node: the pod of one host index.
	MilliCPU, Memory, GPU int64
	// PodTemplate is the task's pod template as JSON (the API's
	// PodTemplate), or nil.
	PodTemplate []byte
	// ScheduleTimeout bounds how long the attempt's pods may stay
	// unschedulable; 0 means the backend's default.
	ScheduleTimeout time.Duration
	// PodGroup, set by the training runtime's pod-group policy, says
	// which gang scheduler places the gang and how; nil leaves it to the
	// backend's own setting.
	PodGroup *PodGroup `json:",omitempty"`
	// TimeLimit is the task's timeout, for backends whose scheduler
	// bounds a job's time itself (Slurm's --time, a backstop while kiln
	// is down); 0: none. kiln enforces the timeout on every backend.
	TimeLimit time.Duration `json:",omitempty"`
	// Queue is the Kueue LocalQueue that admits the attempt (the pod
	// template's kueue.x-k8s.io/queue-name label), or "": the Kubernetes
	// backend creates its pods only once Kueue has admitted its Workload.
	Queue string `json:",omitempty"`
}

// Gang schedulers a PodGroup can be for.
const (
	// PodGroupCoscheduling is scheduler-plugins' Coscheduling plugin.
	PodGroupCoscheduling = "coscheduling"
	// PodGroupVolcano is Volcano's scheduler.
	PodGroupVolcano = "volcano"
)

// PodGroup is a gang's pod group: its pods are placed all together or
// not at all, by the gang scheduler Kind names.
type PodGroup struct {
	// Kind is PodGroupCoscheduling or PodGroupVolcano.
	Kind string
	// MinMember is how many of the gang's hosts must be placed together.
	MinMember int
	// ScheduleTimeout is how long the scheduler holds part of the gang
	// placed while it waits for the rest; 0: the scheduler's default.
	ScheduleTimeout time.Duration
}

// Process is one process of an attempt.
type Process struct {
	// Name is unique within the attempt: empty for a task's only process,
	// "node-0-0" (node, process) for training replicas. Logs are kept per name.
	Name string
	// Command is the program and its arguments, templates expanded. It is
	// run directly, never through a shell. Empty, the process runs its
	// image's entrypoint with Args: a container backend alone can (the
	// local backend refuses it; kiln refuses such a task there before it
	// runs).
	Command []string
	// Args are the arguments to the image's entrypoint when Command is
	// empty; with a Command they are empty (Command holds every argument).
	Args []string `json:",omitempty"`
	// Env is the full environment as KEY=VALUE pairs. The backend adds
	// KILN_OUTPUTS.
	Env []string
	// Host is the index, in the attempt's Network.Hosts, of the node the
	// process runs on. Processes of one host share a machine (a pod).
	Host int
	// Group is the replica group of a training process ("node",
	// "launcher", "ps"); empty for a task's only process.
	Group string `json:",omitempty"`
}

// State is what a backend knows of an attempt.
type State int

// States of an attempt as a backend sees it.
const (
	// StateUnknown: the backend never started this attempt.
	StateUnknown State = iota
	// StateRunning: its processes are running.
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
	// ExitCode decides the attempt: the first failing process's exit
	// status, or the leader's, or 0; -1 if killed by a signal or never started.
	ExitCode int
	// Signal names the signal that ended the deciding process, if one did.
	Signal string
	// Failed names the process whose failure decided a gang.
	Failed string
	// Stopped is set when the backend stopped the deciding process (on
	// request, or while stopping its gang), rather than it ending on its own.
	Stopped bool
	// System is set when the machine, not the task, ended the attempt: its
	// supervisor died, its pod was evicted or deleted, or a process was
	// killed from outside kiln. Such failures are retried from the
	// engine's system budget, not the task's own retries.
	System bool
	// StartError says why a process could not be started; NotFound is set
	// when its command does not exist.
	StartError string
	NotFound   bool
	// StartedAt and FinishedAt are the processes' times.
	StartedAt, FinishedAt time.Time
	// Processes are the exit codes of every process, by name.
	Processes map[string]int
	// Dropped names the processes of an elastic gang that failed without
	// taking it down (its lost nodes), in the order they ended.
	Dropped []string
	// StoppedProcesses names the processes the backend stopped (on
	// request, or taking their gang down) instead of letting them end on
	// their own.
	StoppedProcesses []string
	// LeftRunning names the processes still running when the gang's end
	// was recorded, left to end on their own (cleanPodPolicy None).
	LeftRunning []string
	// Outputs are the output parameters read back after a successful exit.
	Outputs map[string]string
	// OutputError says why a declared output (parameter or artifact)
	// could not be read.
	OutputError string
	// Artifacts is the JSON list of output artifacts the attempt's
	// processes stored themselves (see Spec.Store), as kiln artifact-exec
	// records them; empty if they stored none.
	Artifacts string `json:",omitempty"`
	// Code is a KLN code for a cause the backend recognised (the cluster
	// killed a container for its memory, say); Message then holds the
	// backend's own words. Permanent says a retry cannot help.
	Code      string
	Message   string
	Permanent bool
	// Report is a kind's own account of how the attempt ended (a
	// federated attempt's shares, as JSON), for its node's Reporter.
	Report []byte
	// Queue, on a running attempt, says that some of its processes still
	// wait for the cluster to place them (their pods are not bound to a
	// node yet); nil once every process is placed, and on backends that
	// start processes at once.
	Queue *Queue `json:",omitempty"`
	// LogsLost are the logs of the attempt's processes that could not be
	// written whole (the disk was full), by log name; empty when every
	// byte was written. The attempt's outcome does not depend on them.
	LogsLost []LogLoss `json:",omitempty"`
}

// LogLoss is what one log of an attempt could not hold.
type LogLoss struct {
	// Log names the log: "stdout" or "stderr" of a task's process,
	// "<process>.stdout" of a gang's.
	Log string
	// Bytes counts the bytes the process wrote that the log lost.
	Bytes int64
	// Cause says why, in a few words ("disk full").
	Cause string
}

// Queue says why a launched attempt's processes wait to be placed.
type Queue struct {
	// Reason is the scheduler's reason ("Unschedulable"), or
	// "WaitingForScheduler" while no scheduler has written one.
	Reason string
	// Message is the scheduler's own words, with the pod they are about.
	Message string
	// Processes names the processes that wait, in the spec's order.
	Processes []string
}

// Succeeded reports whether the attempt exited 0 and its outputs were read.
func (s *Status) Succeeded() bool {
	return s.State == StateExited && s.ExitCode == 0 && s.StartError == "" && s.OutputError == ""
}

// Network is where an attempt's processes reach each other.
type Network struct {
	// Hosts is the address of each node, as the processes see it.
	Hosts []string
	// Ports are free ports reserved for the attempt, the same on every call.
	Ports []int
}
