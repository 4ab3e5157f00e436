package apidoc

import (
	"net/http"

	trainer "kiln.dev/kiln/api/trainer/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// runOperations are the routes of runs: submit, list, read, steer and follow them.
func runOperations() []Operation {
	return []Operation{
		{
			Method: "POST", Path: "/api/v1/runs", ID: "submitRun", Tag: "runs", Role: Editor,
			Summary: "submit a Workflow or TrainJob",
			Description: "Submit a Workflow or TrainJob (TrainingRuntimes may come with it): as multipart/form-data with one file part per file, or as one YAML or JSON body. " +
				"With an Idempotency-Key, a submission whose key created a run of the project within 24 hours answers with that run (201, header Idempotency-Replayed: true) and creates none; the CLI and the SDK send a key with every submission and send it again on a retry. " +
				"A submission not checked in time to answer before the server's write timeout is 503 KLN-4062 and creates no run.",
			Params: []Param{
				projectParam,
				{Name: "Idempotency-Key", In: "header", Type: "", Description: "1 to 255 letters, digits and - _ . : + / = (400 KLN-4060 otherwise), such as 32 random hex digits: the same on every retry of one submission. The same key with another submission (files, params, project, workdir, cache) is 409 KLN-4061"},
				{Name: "param", In: "query", Type: []string{}, Description: "name=value, repeatable"},
				{Name: "file", In: "query", Type: "", Description: "the name errors give a plain body (default request)"},
				{Name: "workdir", In: "query", Type: "", Description: "the submitter's working directory, absolute; kept only for a request from this machine (loopback) whose directory this machine has: tasks then start in the directory of the workflow's file, else each in its attempt's own"},
				{Name: "cache", In: "query", Type: "", Description: "how the run uses the cache: on (reuse and store results), off (neither) or overwrite (compute afresh and replace); KLN-1012 if another", Enum: []string{"on", "off", "overwrite"}, Default: "on"},
			},
			Body:    filesBody(runnableDocument, "a Workflow or a TrainJob (of any group), and the TrainingRuntimes and subworkflows it uses"),
			Answers: []Answer{{Status: http.StatusCreated, Description: "the new run", Type: apiv1.Run{}}},
			Errors:  []int{http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity, http.StatusRequestTimeout, http.StatusServiceUnavailable, http.StatusInsufficientStorage},
		},
		{
			Method: "GET", Path: "/api/v1/runs", ID: "listRuns", Tag: "runs", Role: Viewer,
			Summary: "list runs", Description: "List runs, newest first (order=asc: oldest first), a page at a time; with watch=true, follow them.",
			Params: []Param{
				{Name: "phase", In: "query", Type: "", Description: "run phases in any case, comma separated (failed,cancelled); an unknown one is 400 KLN-4050 naming it and the phases"},
				{Name: "name", In: "query", Type: ""},
				{Name: "since", In: "query", Type: "", Description: "created at or after: RFC 3339, or a duration ago such as 2h (400 KLN-4051 otherwise)"},
				{Name: "until", In: "query", Type: "", Description: "created before: RFC 3339, or a duration ago"},
				{Name: "q", In: "query", Type: "", Description: "a search: runs whose ID or workflow name holds it, in any case"},
				{Name: "order", In: "query", Type: "", Description: "asc or desc (the default) on creation time; the cursor follows it", Enum: []string{"asc", "desc"}},
				{Name: "label", In: "query", Type: "", Description: "a label selector in kubectl's syntax: key, !key, key=value, key==value, key!=value, key in (a,b), key notin (a,b), comma-joined (all hold); one that does not parse is a 400 naming label"},
				{Name: "watch", In: "query", Type: false, Description: "true: instead of a page, a text/event-stream of the first page's runs (the same filters) as they are created or change: event run, data the run as the list has it; a run that leaves the page because its phase changed is sent once more as it then is, a deleted one as event deleted, data {id}; a comment (: ping) after 15s of silence. Each event's id is opaque: sent back as Last-Event-ID (or ?after=), the watch sends the runs that may have changed since it, and an id it did not give starts afresh"},
				{Name: "project", In: "query", Type: ""},
				{Name: "limit", In: "query", Type: 0, Default: 50, Maximum: bound(500)},
				{Name: "cursor", In: "query", Type: "", Description: "the next of the previous page"},
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "a page of runs; with watch=true, a stream of them", Type: apiv1.RunList{}, Stream: "text/event-stream", StreamDescription: "with watch=true: event run, data a Run; event deleted, data {id}"}},
		},
		{
			Method: "GET", Path: "/api/v1/runs/{id}", ID: "getRun", Tag: "runs", Role: Viewer,
			Summary: "one run with its nodes, attempts and conditions",
			Params: []Param{
				runID,
				{Name: "nodes", In: "query", Type: false, Default: true, Description: "false: the run without status.nodes (status.progress still counts them); read them a page at a time with listRunNodes. Any value but true or false is a 400 naming nodes"},
				ifNoneMatch,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the run", Type: apiv1.Run{}, Example: exampleRun()}, notModified},
		},
		{
			Method: "DELETE", Path: "/api/v1/runs/{id}", ID: "deleteRun", Tag: "runs", Role: Editor,
			Summary:     "delete a run",
			Description: "Delete a run: its records, logs and outputs; 409 (KLN-4010) for a run that has not ended, unless force=true, which cancels it first and deletes it once it has ended (409 if it does not end in time).",
			Params: []Param{
				runID,
				{Name: "force", In: "query", Type: false},
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "deleted", Type: apiv1.RunDeleted{}}},
			Errors:  []int{http.StatusConflict},
		},
		{
			Method: "GET", Path: "/api/v1/runs/{id}/trainjob", ID: "getTrainJob", Tag: "runs", Role: Viewer,
			Summary:     "a TrainJob's run as Kubeflow Trainer's TrainJob reads",
			Description: "A TrainJob's run as Kubeflow Trainer's TrainJob reads: metadata and status (conditions, jobsStatus, trainerStatus); 404 (KLN-4032) for a run of another kind.",
			Params: []Param{
				runID,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the TrainJob", Type: trainer.TrainJobView{}}},
		},
		{
			Method: "POST", Path: "/api/v1/runs/{id}/cancel", ID: "cancelRun", Tag: "runs", Role: Editor,
			Summary: "cancel a run", Description: "Cancel a run; 409 (KLN-4010) for a run that has ended.",
			Params: []Param{
				runID,
			},
			Answers: []Answer{{Status: http.StatusAccepted, Description: "the cancel is asked", Type: apiv1.RunRequested{}}},
			Errors:  []int{http.StatusConflict},
		},
		{
			Method: "POST", Path: "/api/v1/runs/{id}/stop", ID: "stopRun", Tag: "runs", Role: Editor,
			Summary: "stop a run, running its exit handlers",
			Description: "Stop a run as argo stop does: its running tasks are stopped, nothing else starts, its exit handlers run, " +
				"and it ends Failed (KLN-3020); cancel ends it without them. 409 (KLN-4010) for a run that has ended.",
			Params: []Param{
				runID,
			},
			Answers: []Answer{{Status: http.StatusAccepted, Description: "the stop is asked", Type: apiv1.RunRequested{}}},
			Errors:  []int{http.StatusConflict},
		},
		{
			Method: "POST", Path: "/api/v1/runs/{id}/retry", ID: "retryRun", Tag: "runs", Role: Editor,
			Summary: "run a Failed or Cancelled run again from where it stopped",
			Description: "Run a Failed or Cancelled run again from where it stopped: what did not succeed runs again " +
				"(skipped and cancelled map items included) and the exit handlers run again; tasks that succeeded keep " +
				"their outputs unless restartSuccessful names them. The body is optional.",
			Params: []Param{
				runID,
			},
			Body: &Body{Optional: true, Type: apiv1.RetryRequest{}, Example: apiv1.RetryRequest{
				Params: map[string]string{"lr": "0.01"}, RestartSuccessful: true, Nodes: []string{"train"},
			}},
			Answers: []Answer{{Status: http.StatusAccepted, Description: "the retry is asked", Type: apiv1.RunRequested{}}},
			Errors:  []int{http.StatusConflict},
		},
		{
			Method: "POST", Path: "/api/v1/runs/{id}/rerun", ID: "rerunRun", Tag: "runs", Role: Editor,
			Summary: "start a new run of a run that ended",
			Description: "Start a new run of a run that ended (Succeeded included) from its stored spec, never the file on disk: from, only or until one of its top-level tasks; 400 (KLN-4020) for a node that is not a top-level task, (KLN-4021) for --only a task whose upstream task did not succeed, 409 (KLN-4010) for a run that has not ended. " +
				"With an Idempotency-Key, a rerun whose key created a run of the project within 24 hours answers with that run (header Idempotency-Replayed: true) and creates none, as a submission does.",
			Params: []Param{
				runID,
				{Name: "Idempotency-Key", In: "header", Type: "", Description: "as for a submission: the same on every retry of one rerun; the same key with another rerun (run, mode, node, params, cache) is 409 KLN-4061"},
			},
			Body:    &Body{Type: apiv1.RerunRequest{}, Example: apiv1.RerunRequest{Mode: apiv1.RerunFrom, Node: "train", Params: map[string]string{"epochs": "5"}}},
			Answers: []Answer{{Status: http.StatusCreated, Description: "the new run", Type: apiv1.Run{}}},
			Errors:  []int{http.StatusConflict, http.StatusRequestEntityTooLarge},
		},
		{
			Method: "POST", Path: "/api/v1/runs/{id}/suspend", ID: "suspendRun", Tag: "runs", Role: Editor,
			Summary: "suspend a run's training jobs", Description: "Suspend a run's training jobs; 409 (KLN-4010) for a run that has ended.",
			Params: []Param{
				runID,
			},
			Answers: []Answer{{Status: http.StatusAccepted, Description: "the suspension is asked", Type: apiv1.RunSuspension{}}},
			Errors:  []int{http.StatusConflict},
		},
		{
			Method: "POST", Path: "/api/v1/runs/{id}/unsuspend", ID: "unsuspendRun", Tag: "runs", Role: Editor,
			Summary:     "start a run's suspended training jobs again",
			Description: "Start a run's suspended training jobs again; 409 (KLN-4010) for a run that has ended.",
			Params: []Param{
				runID,
			},
			Answers: []Answer{{Status: http.StatusAccepted, Description: "the start is asked", Type: apiv1.RunSuspension{}}},
			Errors:  []int{http.StatusConflict},
		},
		{
			Method: "POST", Path: "/api/v1/runs/{id}/nodes/{node}/approve", ID: "approveGate", Tag: "runs", Role: Editor,
			Summary:     "approve or reject a gate",
			Description: "Approve (approve: true) or reject (false) a gate task waiting for an approval; the sender is the token's name, ID and role. 409 (KLN-4014) if the task is not a gate waiting for one, 409 (KLN-4010) for a run that has ended.",
			Params: []Param{
				runID,
				{Name: "node", In: "path", Type: "", Description: "a task of the run"},
			},
			Body:    &Body{Type: apiv1.Approval{}, Example: exampleApproval()},
			Answers: []Answer{{Status: http.StatusAccepted, Description: "sent", Type: apiv1.GateSent{}}},
			Errors:  []int{http.StatusConflict, http.StatusRequestEntityTooLarge},
		},
		{
			Method: "POST", Path: "/api/v1/runs/{id}/nodes/{node}/signal", ID: "signalGate", Tag: "runs", Role: Editor,
			Summary:     "send a value to a gate task waiting for a signal",
			Description: "Send a value to a gate task waiting for a signal; it must parse as the gate's type (string, int, float, bool or json) and fit in 64 KiB. 409 (KLN-4014) if the task is not a gate waiting for a value or the value does not parse, 400 (KLN-1023) for a value over 64 KiB, 409 (KLN-4010) for a run that has ended.",
			Params: []Param{
				runID,
				{Name: "node", In: "path", Type: "", Description: "a task of the run"},
			},
			Body:    &Body{Type: apiv1.Signal{}, Example: exampleSignal()},
			Answers: []Answer{{Status: http.StatusAccepted, Description: "sent", Type: apiv1.GateSent{}}},
			Errors:  []int{http.StatusConflict, http.StatusRequestEntityTooLarge},
		},
		{
			Method: "GET", Path: "/api/v1/runs/{id}/events", ID: "listRunEvents", Tag: "runs", Role: Viewer,
			Summary:     "a run's events",
			Description: "A run's events; as text/event-stream (or follow=true) until the run ends, each event's id its seq, with a comment (: ping) after 15s of silence.",
			Params: []Param{
				runID,
				{Name: "after", In: "query", Type: 0, Description: "the seq after which events are sent; a Last-Event-ID header (an EventSource reconnecting) takes its place"},
				{Name: "follow", In: "query", Type: false},
				{Name: "tail", In: "query", Type: 0, Maximum: bound(apiv1.MaxEventPage), Description: "only the last N events (after after), oldest first; total then counts them all. Not with limit: both is a 400 naming tail"},
				{Name: "limit", In: "query", Type: 0, Maximum: bound(apiv1.MaxEventPage), Description: "a page of N events, oldest first; continue then asks for the next, and total counts them all"},
				{Name: "continue", In: "query", Type: "", Description: "the continue of the previous page, with the same after (400 KLN-4076 for one the server did not give)"},
				ifNoneMatch,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the events; as a stream with follow=true or Accept: text/event-stream", Type: apiv1.EventList{}, Stream: "text/event-stream", StreamDescription: "event: the reason, id: the seq, data: an Event"}, notModified},
		},
		{
			Method: "GET", Path: "/api/v1/runs/{id}/tasks/{task}/logs", ID: "getTaskLogs", Tag: "runs", Role: Viewer,
			Summary:     "what a task's processes wrote",
			Description: "What a task's processes wrote, in the order written (stdout and stderr merged, a gang's processes interleaved; a gang's lines prefixed with their process, \"node-1 | line\"): ?attempt= (default the latest); ?follow=true until that attempt ends, or, for the latest, until the task does.",
			Params: []Param{
				runID,
				{Name: "task", In: "path", Type: ""},
				{Name: "attempt", In: "query", Type: 0},
				{Name: "follow", In: "query", Type: false},
				{Name: "tail", In: "query", Type: 0, Description: "the last N lines of each process, its stdout and stderr together, before following"},
				{Name: "since", In: "query", Type: "", Description: "the lines written at or after this time: RFC 3339, or a duration ago such as 10m (400 KLN-4051 otherwise); a line whose time was not recorded is kept unless its whole log was written before"},
				{Name: "timestamps", In: "query", Type: false, Description: "true: each line starts with the time it was written, RFC 3339 with nanoseconds, before its process's label (\"2026-11-23T16:00:00.123456789Z node-1 | line\"); a line whose time was not recorded has none"},
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the lines", Stream: "text/plain", StreamDescription: "what the task's processes wrote, line by line"}},
		},
	}
}
