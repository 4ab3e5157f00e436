package controller

import (
	"context"
	"log/slog"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// logEnd tells the engine's log that the run r saved has ended: a failed
// run at WARN, with its code and message, so that an operator of kiln
// serve sees failures without -v; one that succeeded or was cancelled
// at INFO.
func (c *Controller) logEnd(r *round) {
	run := r.rs.run
	st := run.Status
	if !r.runDirty || !st.Phase.Done() {
		return
	}
	level := slog.LevelInfo
	if st.Phase == apiv1.PhaseFailed {
		level = slog.LevelWarn
	}
	args := []any{"run", run.ID, "workflow", run.Name, "phase", st.Phase}
	if st.Code != "" {
		args = append(args, "code", st.Code)
	}
	c.log.Log(context.Background(), level, "run ended", append(args, "message", st.Message)...)
}
