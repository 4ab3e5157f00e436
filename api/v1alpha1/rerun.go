package v1alpha1

// RerunMode says which tasks of a finished run a rerun runs again.
type RerunMode string

// The ways to rerun a run from one of its top-level tasks, NODE.
const (
	// RerunFrom runs NODE and every task downstream of it again. The
	// other tasks that succeeded in the source run are reused; those that
	// did not run again, as kiln retry would run them. The workflow's
	// onExit tasks run.
	RerunFrom RerunMode = "from"
	// RerunOnly runs NODE alone, with the inputs it had: the tasks it
	// depends on are reused (each must have succeeded in the source run)
	// and every other task is not run. The onExit tasks do not run.
	RerunOnly RerunMode = "only"
	// RerunUntil runs NODE and the tasks it depends on, directly or not;
	// every other task is not run. The onExit tasks run.
	RerunUntil RerunMode = "until"
)

// RerunModes lists the modes, in the order commands show them.
func RerunModes() []RerunMode { return []RerunMode{RerunFrom, RerunOnly, RerunUntil} }

// RerunRequest asks for a new run made from a finished run's stored spec
// (its workflow, subworkflows and params, never the file on disk).
type RerunRequest struct {
	// Mode is from, only or until.
	Mode RerunMode `json:"mode"`
	// Node is a top-level task of the source run.
	Node string `json:"node"`
	// Params change parameters for the rerun; the others keep the source
	// run's values. Reused tasks keep the outputs they had.
	Params map[string]string `json:"params,omitempty"`
	// Cache is how the tasks the rerun runs use the cache. Empty means
	// overwrite: a task asked to run again runs (a changed script the key
	// cannot see is run), and its stored result is replaced; on lets
	// them reuse stored results.
	Cache CacheMode `json:"cache,omitempty"`
	// IdempotencyKey, as for a Submission, makes the rerun sent again
	// with it answer the run it created (the Idempotency-Key header).
	IdempotencyKey string `json:"-"`
}

// Digest identifies the rerun of run src that r asks for, to tell a
// rerun sent again under its key from another one under the same key.
func (r *RerunRequest) Digest(src RunID) string {
	var d digest
	for _, v := range []string{"rerun", string(src), string(r.Mode), r.Node, string(r.Cache)} {
		d.field([]byte(v))
	}
	d.params(r.Params)
	return d.sum()
}

// RetryRequest says how a Failed or Cancelled run is tried again (POST
// /api/v1/runs/{id}/retry; an empty body is the plain retry): what did not
// succeed runs again, and the exit handlers, as Argo's retry does.
type RetryRequest struct {
	// Params change parameters for what runs again; the others keep
	// their values. Tasks that succeeded keep their outputs.
	Params map[string]string `json:"params,omitempty"`
	// RestartSuccessful runs Nodes again even though they succeeded,
	// with every task downstream of them (Argo's --restart-successful
	// with --node-field-selector).
	RestartSuccessful bool `json:"restartSuccessful,omitempty"`
	// Nodes are the top-level tasks RestartSuccessful restarts.
	Nodes []string `json:"nodes,omitempty"`
}

// RerunOf links a rerun to the run it was made from.
type RerunOf struct {
	// Run is the source run.
	Run RunID `json:"run"`
	// Mode and Node are what the rerun was asked to do.
	Mode RerunMode `json:"mode"`
	Node string    `json:"node"`
}

// Reused says where the result of a task that a rerun reused comes from:
// the run, task and attempt that produced it. Downstream tasks read its
// artifacts from that attempt's output directory. A task reused from a
// run that itself reused it names the run that produced it.
type Reused struct {
	Run  RunID  `json:"run"`
	Node string `json:"node"`
	// Attempt is the attempt whose outputs are reused; 0 for a task that
	// runs no attempt of its own (a map, a subworkflow).
	Attempt int `json:"attempt,omitempty"`
}
