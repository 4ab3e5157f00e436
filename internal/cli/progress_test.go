package cli

import (
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestProgressIsShownAsDoneOfTotal(t *testing.T) {
	t.Parallel()
	p := &apiv1.RunProgress{Total: 12, Done: 7, Succeeded: 5, Failed: 1, Skipped: 1, Running: 2}
	if got := progressCell(p); got != "7/12" {
		t.Errorf("progressCell = %q, want 7/12", got)
	}
	if got := progressCell(nil); got != "-" {
		t.Errorf("progressCell(nil) = %q, want -", got)
	}
	want := "7/12 tasks done (5 succeeded, 1 failed, 1 skipped), 2 running"
	if got := progressLine(p); got != want {
		t.Errorf("progressLine = %q, want %q", got, want)
	}
}

func TestTrainerLineShowsPercentETAAndMetrics(t *testing.T) {
	t.Parallel()
	pct, eta := int32(40), int32(125)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	ts := &apiv1.TrainerStatus{
		ProgressPercentage: &pct, EstimatedRemainingSeconds: &eta, LastUpdatedTime: at,
		Metrics: []apiv1.Metric{{Name: "loss", Value: "0.31"}, {Name: "step", Value: "30"}},
	}
	want := "40%, ETA 2m5s, loss=0.31 step=30 (reported 2026-01-02 03:04:05)"
	if got := trainerLine(ts); got != want {
		t.Errorf("trainerLine = %q, want %q", got, want)
	}
	if got := trainerLine(&apiv1.TrainerStatus{LastUpdatedTime: at}); got != "nothing known yet (reported 2026-01-02 03:04:05)" {
		t.Errorf("trainerLine of an empty report = %q", got)
	}
}

func TestTheLiveTableHeadsARunWithItsProgress(t *testing.T) {
	t.Parallel()
	run := &apiv1.Run{ID: "wf-abcde", Status: apiv1.RunStatus{Phase: apiv1.PhaseRunning, Progress: &apiv1.RunProgress{Total: 12, Done: 7}}}
	var b strings.Builder
	writeRunTable(&b, run)
	if first, _, _ := strings.Cut(b.String(), "\n"); first != "RUN wf-abcde  Running  -  7/12 done" {
		t.Errorf("the live table's first line is %q", first)
	}
}
