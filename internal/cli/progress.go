package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// progressCell is the PROGRESS cell of kiln get runs: tasks done of the
// tasks known, "-" for a run stored before kiln counted them.
func progressCell(p *apiv1.RunProgress) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d", p.Done, p.Total)
}

// progressLine says how far a run got:
// `7/12 tasks done (5 succeeded, 1 failed, 1 skipped), 2 running`.
func progressLine(p *apiv1.RunProgress) string {
	s := fmt.Sprintf("%d/%s done", p.Done, plural(p.Total, "task"))
	var parts []string
	for _, c := range []struct {
		n    int
		word string
	}{{p.Succeeded, "succeeded"}, {p.Failed, "failed"}, {p.Skipped, "skipped"}, {p.Cancelled, "cancelled"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.word))
		}
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	if p.Running > 0 {
		s += fmt.Sprintf(", %d running", p.Running)
	}
	return s
}

// writeProgress writes describe's Progress line, if the run has a count.
func writeProgress(w io.Writer, p *apiv1.RunProgress) {
	if p != nil {
		fmt.Fprintf(w, "Progress:  %s\n", progressLine(p))
	}
}

// trainerLine says what a training job's processes reported:
// `40%, ETA 2m0s, loss=0.31 step=30 (reported 2026-01-02 03:04:05)`.
func trainerLine(ts *apiv1.TrainerStatus) string {
	var parts []string
	if p := ts.ProgressPercentage; p != nil {
		parts = append(parts, fmt.Sprintf("%d%%", *p))
	}
	if s := ts.EstimatedRemainingSeconds; s != nil {
		parts = append(parts, "ETA "+(time.Duration(*s)*time.Second).String())
	}
	var metrics []string
	for _, m := range ts.Metrics {
		metrics = append(metrics, m.Name+"="+m.Value)
	}
	if len(metrics) > 0 {
		parts = append(parts, oneLine(strings.Join(metrics, " ")))
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing known yet")
	}
	return strings.Join(parts, ", ") + " (reported " + clock(ts.LastUpdatedTime) + ")"
}
