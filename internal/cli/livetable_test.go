package cli

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestTheLiveTableFitsTheWidthItIsGiven(t *testing.T) {
	t.Parallel()
	run := &apiv1.Run{ID: "wf-abcde", Status: apiv1.RunStatus{Phase: apiv1.PhaseRunning}}
	for i := range 5 {
		run.Status.Nodes = append(run.Status.Nodes, apiv1.NodeStatus{
			Name:    fmt.Sprintf("shard-%d-of-a-task-with-a-name-long-enough-to-need-two-lines-%d", i, i),
			Phase:   apiv1.PhaseFailed,
			Message: strings.Repeat("a long error message ", 8),
		})
	}
	for _, cols := range []int{40, 80, 120} {
		lines := liveTable(run, cols, maxTableRows)
		if len(lines) != 2+len(run.Status.Nodes) {
			t.Errorf("%d columns: %d lines, want a head, a header and a row per task", cols, len(lines))
		}
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > cols-1 {
				t.Errorf("%d columns: a line of %d: %q", cols, n, l)
			}
		}
		for i, l := range lines[2:] {
			head := fmt.Sprintf("shard-%d-", i)
			if cols == 40 {
				head = "shard" // the name gets no fewer than 12 columns
			}
			if !strings.Contains(l, "Failed") || !strings.HasPrefix(strings.TrimSpace(l), head) || !strings.Contains(l, fmt.Sprintf("-%d ", i)) {
				t.Errorf("%d columns: row %q lost its task's head, tail or phase", cols, l)
			}
		}
	}
	if lines := liveTable(run, 0, maxTableRows); !strings.Contains(lines[2], run.Status.Nodes[0].Name) {
		t.Errorf("unbounded: row %q, want the whole name", lines[2])
	}
}

func TestSqueezeKeepsBothEnds(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		in   string
		n    int
		want string
	}{
		"short enough":   {"train", 12, "train"},
		"middle cut":     {"prefix-middle-part-suffix-07", 14, "prefix..fix-07"},
		"tiny room cuts": {"abcdefgh", 3, "abc"},
	} {
		if got := squeeze(tc.in, tc.n); got != tc.want {
			t.Errorf("%s: squeeze(%q, %d) = %q, want %q", name, tc.in, tc.n, got, tc.want)
		}
	}
}

func TestTableRowsLeaveRoomOnTheScreen(t *testing.T) {
	t.Parallel()
	got := []int{tableRows(0, 1), tableRows(24, 1), tableRows(24, 2), tableRows(5, 3), tableRows(100, 1)}
	if diff := cmp.Diff([]int{maxTableRows, 20, 8, 1, maxTableRows}, got); diff != "" {
		t.Errorf("tableRows (-want +got):\n%s", diff)
	}
}

// On a narrow terminal the head line keeps the run's phase, time and
// progress, and the ID loses its middle instead.
func TestTheHeadLineKeepsThePhaseAndCountsWhenNarrow(t *testing.T) {
	t.Parallel()
	run := &apiv1.Run{
		ID:     "slow-one-with-a-rather-long-descriptive-workflow-name-8",
		Status: apiv1.RunStatus{Phase: apiv1.PhaseRunning, Progress: &apiv1.RunProgress{Done: 1, Total: 3}},
	}
	for cols, wantID := range map[int]string{
		60:  "slow-one-with-a-..workflow-name-8",
		120: string(run.ID),
		30:  "slo..e-8", // never fewer than 8 columns of ID; the line is cut at the edge
	} {
		head := liveTable(run, cols, maxTableRows)[0]
		if n := utf8.RuneCountInString(head); n > cols-1 {
			t.Errorf("%d columns: a head of %d: %q", cols, n, head)
		}
		if cols >= 60 && (!strings.Contains(head, "Running") || !strings.HasSuffix(head, "1/3 done")) {
			t.Errorf("%d columns: head %q lost the phase or the counts", cols, head)
		}
		if !strings.Contains(head, "RUN "+wantID[:4]) || (cols >= 60 && !strings.Contains(head, wantID)) {
			t.Errorf("%d columns: head %q, want the ID as %q", cols, head, wantID)
		}
	}
}
