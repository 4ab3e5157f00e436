package kube

import (
	"testing"
	"time"

	"kiln.dev/kiln/internal/backend"
)

// TestLogLinesAreLabelledAsLocalOnes checks a gang's lines read from the
// pod log API carry their process's name as the local backend writes it,
// after the API's time when asked for times.
func TestLogLinesAreLabelledAsLocalOnes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line              string
		prefix, timestamp bool
		want              string
	}{
		{"hello world", false, false, "hello world"},
		{"hello world", true, false, "node-1 | hello world"},
		{"2026-11-23T16:00:00.123456789Z hello world", true, true, "2026-11-23T16:00:00.123456789Z node-1 | hello world"},
		{"2026-11-23T16:00:00.123456789Z hello", false, true, "2026-11-23T16:00:00.123456789Z hello"},
	}
	for _, c := range cases {
		if got := labelled(c.line, "node-1", c.prefix, c.timestamp); got != c.want {
			t.Errorf("labelled(%q, prefix %t, timestamps %t) = %q, want %q", c.line, c.prefix, c.timestamp, got, c.want)
		}
	}
}

// TestPodLogOptionsCarryTailSinceAndTimestamps checks what the pod log
// API is asked for.
func TestPodLogOptionsCarryTailSinceAndTimestamps(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 11, 23, 16, 0, 0, 0, time.UTC)
	o := podLogOptions(logStream{pod: "p", container: "node-0"}, backend.LogOptions{Tail: 3, Since: since, Timestamps: true}, true)
	if o.Container != "node-0" || !o.Follow || !o.Timestamps || o.TailLines == nil || *o.TailLines != 3 || o.SinceTime == nil || !o.SinceTime.Time.Equal(since) {
		t.Errorf("pod log options = %+v", o)
	}
	if o := podLogOptions(logStream{container: "main"}, backend.LogOptions{}, false); o.TailLines != nil || o.SinceTime != nil || o.Timestamps {
		t.Errorf("pod log options with none asked = %+v", o)
	}
}
