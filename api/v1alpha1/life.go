package v1alpha1

// HistoryLimit is how many finished runs of one workflow name a project
// keeps, as Argo CronWorkflow's successfulJobsHistoryLimit and
// failedJobsHistoryLimit: the newest are kept, older ones deleted. An
// unset count takes the engine's default (kiln serve --history-succeeded,
// --history-failed; unlimited unless set). The newest finished run's
// limit is the one that applies to its name.
type HistoryLimit struct {
	// Succeeded is how many Succeeded runs to keep.
	Succeeded *int32 `json:"succeeded,omitempty"`
	// Failed is how many Failed or Cancelled runs to keep.
	Failed *int32 `json:"failed,omitempty"`
}
