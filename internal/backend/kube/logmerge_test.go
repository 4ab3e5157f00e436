package kube

import (
	"strings"
	"testing"
)

// mergeByTime interleaves a gang's container logs by the times the pod
// log API starts their lines with, keeps the order of sources on a tie,
// and writes the times only when asked.
func TestMergeByTimeInterleavesContainers(t *testing.T) {
	t.Parallel()
	sources := func() []timedSource {
		return []timedSource{
			{label: "ps-0", r: strings.NewReader("2026-11-23T16:00:25.1586Z a\n2026-11-23T16:00:26Z c\n2026-11-23T16:00:27Z e\n")},
			{label: "worker-1", r: strings.NewReader("2026-11-23T16:00:25.1577Z b0\n2026-11-23T16:00:26Z d\n")},
		}
	}
	var out strings.Builder
	if err := mergeByTime(sources(), false, &lineWriter{w: &out}); err != nil {
		t.Fatal(err)
	}
	if want := "worker-1 | b0\nps-0 | a\nps-0 | c\nworker-1 | d\nps-0 | e\n"; out.String() != want {
		t.Errorf("merged = %q, want %q", out.String(), want)
	}
	out.Reset()
	if err := mergeByTime(sources(), true, &lineWriter{w: &out}); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(out.String(), "\n"); first != "2026-11-23T16:00:25.1577Z worker-1 | b0" {
		t.Errorf("with timestamps the first line = %q, want the time before the label", first)
	}
}
