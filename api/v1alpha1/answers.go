package v1alpha1

// The bodies of the HTTP API's answers and requests that are not
// resources of their own. The server writes exactly these types, and the
// OpenAPI document is generated from them.

// ErrorList is the body of every error answer of the HTTP API.
type ErrorList struct {
	// Errors are every problem found, the first the most telling.
	Errors []*Error `json:"errors"`
}

// Whoami says who a request's bearer token names (GET /api/v1/whoami).
type Whoami struct {
	// Name is the token's name; empty without a known token.
	Name string `json:"name"`
	// Role is viewer, editor or admin; empty without a known token.
	Role string `json:"role"`
	// Projects are those the token may touch; "*" is every project.
	Projects []string `json:"projects"`
	// Authenticated says the request carried a known, unrevoked token.
	Authenticated bool `json:"authenticated"`
}

// RunRequested answers a request that a run be cancelled, stopped or retried:
// the engine acts on it in its next round.
type RunRequested struct {
	// Run is the run asked.
	Run RunID `json:"run"`
	// Requested is what was asked: cancel, stop or retry.
	Requested string `json:"requested"`
}

// RunSuspension answers a request that a run's training jobs be
// suspended or started again.
type RunSuspension struct {
	// Run is the run asked.
	Run RunID `json:"run"`
	// Suspend is what the run was set to.
	Suspend bool `json:"suspend"`
}

// RunDeleted answers the deletion of a run.
type RunDeleted struct {
	// Run is the run deleted.
	Run RunID `json:"run"`
	// Deleted is always true.
	Deleted bool `json:"deleted"`
}

// Approval approves or rejects a gate task waiting for an approval.
type Approval struct {
	// Approve is required: true approves, false rejects.
	Approve *bool `json:"approve" jsonschema:"required"`
	// Reason is kept with the gate's record.
	Reason string `json:"reason,omitempty"`
}

// Signal sends a value to a gate task waiting for one.
type Signal struct {
	// Value is required; it must parse as the gate's type (string, int,
	// float, bool or json) and fit in 64 KiB.
	Value *string `json:"value" jsonschema:"required"`
	// Reason is kept with the gate's record.
	Reason string `json:"reason,omitempty"`
}

// GateSent answers an approval, a rejection or a signal sent to a gate.
type GateSent struct {
	// Run and Task name the gate.
	Run  RunID  `json:"run"`
	Task string `json:"task"`
	// Sent is approve, reject or signal.
	Sent string `json:"sent"`
	// By is who sent it: the token's name, ID and role.
	By string `json:"by"`
}

// EventList is a run's events, oldest first: all of them, a page
// (limit, continue) or the last ones (tail).
type EventList struct {
	Items []Event `json:"items"`
	// Continue is the token of the next page, when a limit was asked and
	// more events follow; empty otherwise.
	Continue string `json:"continue,omitempty"`
	// Total is how many events the run has after the query's after, this
	// page's and those left out; set when a limit or a tail was asked.
	Total int `json:"total,omitempty"`
}

// RuntimeList is the training runtimes a project's jobs may name.
type RuntimeList struct {
	// Project is the project asked for; empty when the server keeps no
	// stored runtimes and lists the built-in ones alone.
	Project string             `json:"project,omitempty"`
	Items   []*TrainingRuntime `json:"items"`
}

// SecretList is a project's secret names; values are never listed.
type SecretList struct {
	Project string   `json:"project"`
	Items   []string `json:"items"`
}

// TemplateList is a project's stored WorkflowTemplates, by name.
type TemplateList struct {
	Project string              `json:"project"`
	Items   []*WorkflowTemplate `json:"items"`
}

// ScheduleList is a project's Schedules, by name.
type ScheduleList struct {
	Project string      `json:"project"`
	Items   []*Schedule `json:"items"`
}

// QuotaList is the projects' quotas the token may see.
type QuotaList struct {
	Items []ProjectQuota `json:"items"`
}

// CacheEntryList is stored results of cached tasks, most recently used first.
type CacheEntryList struct {
	Items []*CacheEntry `json:"items"`
}

// PartyList is the parties a server federates with.
type PartyList struct {
	// Party is the server's own party; empty if it has none.
	Party string  `json:"party"`
	Items []Party `json:"items"`
}
