package local

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestJournalKeepsEachAttemptsLastLaunchAndItsEnd(t *testing.T) {
	home := t.TempDir()
	j := newJournal(home)
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	lines := []journalEntry{
		{ID: "r/a/1", Launch: &launchRecord{PIDs: []int{10}, StartTicks: []uint64{7}, Supervisor: "s1", StartedAt: t0}},
		{ID: "r/a/11", Launch: &launchRecord{PIDs: []int{99}, Supervisor: "s1"}}, // an ID the first is a prefix of
		{ID: "r/a/1", Launch: &launchRecord{PIDs: []int{10, 11}, StartTicks: []uint64{7, 8}, Supervisor: "s1", StartedAt: t0}},
		{ID: "r/a/1", Exit: &statusRecord{ExitCode: 3, Running: true}}, // an elastic gang's report: not its end
	}
	for _, e := range lines {
		if err := j.append(e); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := readRecords(home, "r/a/1")
	if err != nil || recs.launch == nil || len(recs.launch.PIDs) != 2 || recs.exit != nil {
		t.Fatalf("records %+v (%v): want the second launch and no end", recs, err)
	}
	if err := j.append(journalEntry{ID: "r/a/1", Exit: &statusRecord{ExitCode: 3, FinishedAt: t0}}); err != nil {
		t.Fatal(err)
	}
	recs, err = readRecords(home, "r/a/1")
	if err != nil || recs.exit == nil || recs.exit.ExitCode != 3 || !recs.exit.FinishedAt.Equal(t0) {
		t.Fatalf("records %+v (%v): want the end, exit code 3", recs, err)
	}
	if pids, err := AttemptPIDs(home, "r/a/11"); err != nil || len(pids) != 1 || pids[0] != 99 {
		t.Errorf("r/a/11's PIDs are %v (%v), want [99]", pids, err)
	}
	if recs, err := readRecords(home, "r/b/1"); err != nil || recs.launch != nil || recs.exit != nil {
		t.Errorf("an attempt never recorded reads as %+v (%v)", recs, err)
	}
}

func TestJournalLineAfterAFailedWriteStandsOnItsOwn(t *testing.T) {
	home := t.TempDir()
	j := newJournal(home)
	if err := j.append(journalEntry{ID: "r/a/1", Launch: &launchRecord{PIDs: []int{10}}}); err != nil {
		t.Fatal(err)
	}
	// A write the disk cut short leaves half a line; the next fails.
	path := journalPath(home, "r")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"id":"r/b/1","launch":{"pi`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	j.files["r"].f.Close()
	if err := j.append(journalEntry{ID: "r/b/1", Launch: &launchRecord{PIDs: []int{20}}}); err == nil {
		t.Fatal("a write to a closed file succeeded")
	}
	if err := j.append(journalEntry{ID: "r/b/1", Exit: &statusRecord{ExitCode: 1}}); err != nil {
		t.Fatal(err)
	}
	if recs, err := readRecords(home, "r/b/1"); err != nil || recs.exit == nil || recs.exit.ExitCode != 1 {
		t.Errorf("the line after the cut one reads as %+v (%v), want exit code 1", recs, err)
	}
	if recs, err := readRecords(home, "r/a/1"); err != nil || recs.launch == nil || recs.launch.PIDs[0] != 10 {
		t.Errorf("the line before the cut one reads as %+v (%v)", recs, err)
	}
}

func TestRecordsOfAnAttemptFromBeforeTheJournal(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "runs", "r", "a", "1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(filepath.Join(dir, "launch.json"), launchRecord{PIDs: []int{5}, Supervisor: "old"}); err != nil {
		t.Fatal(err)
	}
	recs, err := readRecords(home, "r/a/1")
	if err != nil || recs.launch == nil || recs.launch.PIDs[0] != 5 || recs.exit != nil {
		t.Fatalf("records %+v (%v): want launch.json's", recs, err)
	}
	w := newEndWatch(home, "r/a/1")
	if w.ended() {
		t.Fatal("an attempt without status.json reads as ended")
	}
	if err := writeJSON(filepath.Join(dir, "status.json"), statusRecord{ExitCode: 2}); err != nil {
		t.Fatal(err)
	}
	if recs, err := readRecords(home, "r/a/1"); err != nil || recs.exit == nil || recs.exit.ExitCode != 2 {
		t.Errorf("records %+v (%v): want status.json's", recs, err)
	}
	if !w.ended() {
		t.Error("an attempt with status.json reads as running")
	}
}

func TestEndWatchReadsOnlyWhatTheJournalGained(t *testing.T) {
	home := t.TempDir()
	j := newJournal(home)
	w := newEndWatch(home, "r/a/1")
	if w.ended() {
		t.Fatal("ended before the journal existed")
	}
	for _, e := range []journalEntry{
		{ID: "r/a/1", Launch: &launchRecord{PIDs: []int{1}}},
		{ID: "r/a/2", Exit: &statusRecord{}},
	} {
		if err := j.append(e); err != nil {
			t.Fatal(err)
		}
	}
	if w.ended() {
		t.Fatal("ended on another attempt's end")
	}
	read := w.off
	if err := j.append(journalEntry{ID: "r/a/1", Exit: &statusRecord{}}); err != nil {
		t.Fatal(err)
	}
	if !w.ended() || w.off <= read {
		t.Errorf("ended %v at offset %d (was %d), want true past it", w.ended(), w.off, read)
	}
}
