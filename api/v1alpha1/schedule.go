package v1alpha1

import "time"

// KindSchedule is the kind of a Schedule document.
const KindSchedule = "Schedule"

// Labels kiln sets on every run a Schedule starts.
const (
	// LabelSchedule names the Schedule that started the run.
	LabelSchedule = "kiln.dev/schedule"
	// LabelScheduledTime is the tick the run was started for, in Unix
	// seconds: one run per schedule and tick.
	LabelScheduledTime = "kiln.dev/scheduled-time"
)

// Concurrency policies of a Schedule: what a tick does while a run the
// schedule started earlier has not finished.
const (
	// ConcurrencyAllow starts the new run beside the unfinished ones.
	ConcurrencyAllow = "Allow"
	// ConcurrencyForbid skips the tick.
	ConcurrencyForbid = "Forbid"
	// ConcurrencyReplace cancels the unfinished runs, then starts the new.
	ConcurrencyReplace = "Replace"
)

// Schedule runs a workflow on a cron schedule, as a Kubernetes CronJob
// or an Argo CronWorkflow does: kiln apply stores it in a project, and
// the engine of kiln serve (its leader, among replicas) starts one run per
// tick.
type Schedule struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta   `json:"metadata"`
	Spec     ScheduleSpec `json:"spec"`
	// Status is what kiln did with the schedule. kiln sets it; applying
	// a document ignores it, and applying a Schedule that exists keeps it.
	Status *ScheduleStatus `json:"status,omitempty"`
}

// ScheduleSpec says when to run what.
type ScheduleSpec struct {
	// Schedule is a cron expression: five fields (minute hour
	// day-of-month month day-of-week), six with seconds first, or a
	// descriptor (@hourly, @daily, @every 90s...).
	Schedule string `json:"schedule"`
	// TimeZone is the IANA time zone the expression is read in, such as
	// Europe/Paris; default UTC.
	TimeZone string `json:"timeZone,omitempty"`
	// ConcurrencyPolicy is Allow (the default), Forbid or Replace.
	ConcurrencyPolicy string `json:"concurrencyPolicy,omitempty"`
	// StartingDeadlineSeconds is how late a tick may still start a run
	// (a server that was down, a failover). Unset: only the latest
	// missed tick starts, as a CronJob's.
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`
	// Suspend stops the schedule from starting runs.
	Suspend bool `json:"suspend,omitempty"`
	// SuccessfulRunsHistoryLimit is how many succeeded runs of the
	// schedule are kept; default 3.
	SuccessfulRunsHistoryLimit *int `json:"successfulRunsHistoryLimit,omitempty"`
	// FailedRunsHistoryLimit is how many failed or cancelled runs of the
	// schedule are kept; default 1.
	FailedRunsHistoryLimit *int `json:"failedRunsHistoryLimit,omitempty"`
	// WorkflowTemplateRef names a WorkflowTemplate stored in the
	// schedule's project to run. Exactly one of it and Workflow is set.
	WorkflowTemplateRef *TemplateRef `json:"workflowTemplateRef,omitempty"`
	// Workflow is the spec of the Workflow to run, written inline.
	Workflow *WorkflowSpec `json:"workflow,omitempty"`
	// Params set the workflow's parameters, by name.
	Params map[string]string `json:"params,omitempty"`
}

// TemplateRef names a stored WorkflowTemplate.
type TemplateRef struct {
	Name string `json:"name"`
}

// Default history limits, as a CronJob's.
const (
	DefaultSuccessfulRunsHistoryLimit = 3
	DefaultFailedRunsHistoryLimit     = 1
)

// Policy returns the concurrency policy, Allow when unset.
func (s *ScheduleSpec) Policy() string {
	if s.ConcurrencyPolicy == "" {
		return ConcurrencyAllow
	}
	return s.ConcurrencyPolicy
}

// Zone returns the time zone's name, UTC when unset.
func (s *ScheduleSpec) Zone() string {
	if s.TimeZone == "" {
		return "UTC"
	}
	return s.TimeZone
}

// HistoryLimits returns the succeeded and failed runs to keep.
func (s *ScheduleSpec) HistoryLimits() (succeeded, failed int) {
	succeeded, failed = DefaultSuccessfulRunsHistoryLimit, DefaultFailedRunsHistoryLimit
	if s.SuccessfulRunsHistoryLimit != nil {
		succeeded = *s.SuccessfulRunsHistoryLimit
	}
	if s.FailedRunsHistoryLimit != nil {
		failed = *s.FailedRunsHistoryLimit
	}
	return succeeded, failed
}

// ScheduleStatus is what kiln did with a schedule, and what it will do.
type ScheduleStatus struct {
	// Project holds the schedule; its runs belong to it.
	Project string `json:"project"`
	// CreatedAt is when the schedule was first applied; UpdatedAt when
	// it was last.
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// LastTick is the latest tick kiln dealt with: started a run for,
	// skipped or missed. Ticks after it are due.
	LastTick *time.Time `json:"lastTick,omitempty"`
	// LastScheduleTime is the tick of the latest run started.
	LastScheduleTime *time.Time `json:"lastScheduleTime,omitempty"`
	// LastRun is the latest run started.
	LastRun RunID `json:"lastRun,omitempty"`
	// Missed counts the ticks that started no run because they were
	// found too late (startingDeadlineSeconds); Skipped those that a
	// Forbid policy skipped while a run was unfinished.
	Missed  int64 `json:"missed,omitempty"`
	Skipped int64 `json:"skipped,omitempty"`
	// Message says what happened last that was not a run started: a
	// tick missed or skipped, and why, or a run that could not start.
	Message string `json:"message,omitempty"`
	// Code is the message's code (KLN-309x).
	Code Code `json:"code,omitempty"`
	// Active are the unfinished runs of the schedule, as read.
	Active []RunID `json:"active,omitempty"`
	// NextScheduleTime is the next tick, as read; unset while suspended.
	NextScheduleTime *time.Time `json:"nextScheduleTime,omitempty"`
	// Never says, as read, that the expression matches no time in the
	// five years ahead (stored before kiln apply refused such); the
	// schedule starts no run and NextScheduleTime is unset.
	Never bool `json:"never,omitempty"`
}
