package local

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestAnExitLineIsWhatJSONWrites compares the journal's hand-written end
// lines with json.Marshal's, for every field it writes and for ends it
// leaves to json.Marshal, and reads each back.
func TestAnExitLineIsWhatJSONWrites(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 15, 4, 5, 123456789, time.FixedZone("x", 3600))
	cases := []struct {
		id    string
		rec   statusRecord
		plain bool
	}{
		{"r/t/1", statusRecord{Processes: map[string]int{"": 0}, StartedAt: at.UTC(), FinishedAt: at.UTC()}, true},
		{"run-1/train.3/12", statusRecord{
			ExitCode: -1, Signal: "SIGKILL", Failed: "worker-1", System: true, Stopped: true,
			Processes: map[string]int{"worker-1": -1, "leader": 0, "a": 3}, StartedAt: at, FinishedAt: time.Time{},
		}, true},
		{"r/t/2", statusRecord{ExitCode: 2, Failed: "", StartedAt: at}, true},
		{"r/t/3", statusRecord{ExitCode: 1, Failed: "a<b", StartedAt: at}, false},
		{"r/t/4", statusRecord{ExitCode: -1, StartError: `command "x" not found`, NotFound: true, StartedAt: at, FinishedAt: at}, false},
		{"r/t/5", statusRecord{Processes: map[string]int{"": 0}, LogsLost: map[string]logLoss{"stdout": {Bytes: 3, Cause: "disk full"}}}, false},
		{"r/t/6", statusRecord{Processes: map[string]int{"é": 0}}, false},
		{"r/t/7", statusRecord{LeftRunning: []string{"b"}, StoppedProcesses: []string{"a"}, Dropped: []string{"c"}, OOMKilled: []string{"a"}, MemoryLimit: 1 << 30}, false},
	}
	for _, c := range cases {
		e := journalEntry{ID: c.id, Exit: &c.rec}
		if got := plainExit(c.id, &c.rec); got != c.plain {
			t.Errorf("plainExit(%s) = %v, want %v", c.id, got, c.plain)
		}
		got := lineAsJSON(t, e)
		var back attemptRecords
		if _, err := back.read(bytes.NewReader(got), e.ID); err != nil || back.exit == nil || back.exit.ExitCode != c.rec.ExitCode || !back.exit.StartedAt.Equal(c.rec.StartedAt) {
			t.Errorf("line %s read back as %+v (%v)", got, back.exit, err)
		}
	}
}

// lineAsJSON returns e's journal line, checked to be what encoding/json
// writes of e, which is how the journal is read back.
func lineAsJSON(t *testing.T, e journalEntry) []byte {
	t.Helper()
	got, err := e.line()
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want)+"\n" {
		t.Errorf("journal line\n%s want\n%s", got, want)
	}
	return got
}
