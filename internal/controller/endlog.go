package controller

import "log/slog"

// logEnd tells log, at INFO, that the run r saved has
// ended, with its phase, and for one that failed or was cancelled its
// code and message: what an operator of kiln serve reads without -v.
// (kiln run logs at WARN: its user sees the end in its output.)
func logEnd(log *slog.Logger, r *round) {
	run := r.rs.run
	st := run.Status
	if !r.runDirty || !st.Phase.Done() {
		return
	}
	args := []any{"run", run.ID, "workflow", run.Name, "phase", st.Phase}
	if st.Code != "" {
		args = append(args, "code", st.Code)
	}
	log.Info("run ended", append(args, "message", st.Message)...)
}
