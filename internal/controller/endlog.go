package controller

// logEnd tells the engine's log, at INFO, that the run r saved has
// ended, with its phase, and for one that failed or was cancelled its
// code and message: what an operator of kiln serve reads without -v.
// (kiln run logs at WARN: its user sees the end in its output.)
func (c *Controller) logEnd(r *round) {
	run := r.rs.run
	st := run.Status
	if !r.runDirty || !st.Phase.Done() {
		return
	}
	args := []any{"run", run.ID, "workflow", run.Name, "phase", st.Phase}
	if st.Code != "" {
		args = append(args, "code", st.Code)
	}
	c.log.Info("run ended", append(args, "message", st.Message)...)
}
