package local

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// TestCaptureMarksLostBytesWhereTheyWereLost writes a log on a small
// tmpfs that is filled in the middle of the stream and freed again: the
// bytes the disk refused are counted, and the marker that says so comes
// at the place they were lost, before what followed.
func TestCaptureMarksLostBytesWhereTheyWereLost(t *testing.T) {
	dir := smallDisk(t, "64k")
	c, w, err := openCapture(dir, "stdout")
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer func() { c.r.Close(); c.closeFiles() }()
	const before, after = "before\n", "after\n"
	payload := strings.Repeat("0123456789abcdef", 1000) // 16000 bytes, more than a page
	at := time.Now()
	c.take([]byte(before), at)
	filler := fill(t, dir)
	c.take([]byte(payload), at)
	if c.loss.Bytes == 0 || c.loss.Unmarked != c.loss.Bytes || c.loss.Cause != "disk full" {
		t.Fatalf("after writing on a full disk the loss is %+v, want bytes lost to disk full, none marked", c.loss)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	c.take([]byte(after), at)
	c.finish(at)
	lost := c.loss.Bytes
	if c.loss.Unmarked != 0 {
		t.Errorf("unmarked bytes = %d once the disk had room, want 0", c.loss.Unmarked)
	}
	log := readLog(t, dir)
	mark := marker(lost, "disk full")
	kept := int64(len(payload)) - lost
	want := before + payload[:kept] + "\n" + mark + after
	if kept == 0 {
		want = before + mark + after
	}
	if log != want {
		t.Errorf("log =\n%q\nwant\n%q", abbreviate(log), abbreviate(want))
	}
}

// TestCaptureOfAFullDiskCountsEveryByte runs a capture whose disk is
// full from its first byte to its end: the writer never blocks, every
// byte is counted as lost, and none is marked in the log, for the
// attempt's end to carry.
func TestCaptureOfAFullDiskCountsEveryByte(t *testing.T) {
	dir := smallDisk(t, "64k")
	c, w, err := openCapture(dir, "stderr")
	if err != nil {
		t.Fatal(err)
	}
	fill(t, dir)
	c.start()
	const n = 1 << 20 // far more than the pipe holds: a blocked copy would hang here
	if _, err := w.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	<-c.done
	if want := (logLoss{Bytes: n, Unmarked: n, Cause: "disk full"}); c.loss != want {
		t.Errorf("loss = %+v, want %+v", c.loss, want)
	}
	if log := readLog(t, dir); strings.Contains(log, "[kiln:") {
		t.Errorf("the log holds a marker though the disk never had room: %q", abbreviate(log))
	}
}

// TestLossCause names a full disk or quota as such, anything else in
// the system's words.
func TestLossCause(t *testing.T) {
	for err, want := range map[error]string{
		&os.PathError{Op: "write", Path: "stdout", Err: syscall.ENOSPC}: "disk full",
		&os.PathError{Op: "write", Path: "stdout", Err: syscall.EDQUOT}: "disk full",
		&os.PathError{Op: "write", Path: "stdout", Err: syscall.EIO}:    "input/output error",
		errors.New("something else"):                                    "something else",
	} {
		if got := lossCause(err); got != want {
			t.Errorf("lossCause(%v) = %q, want %q", err, got, want)
		}
	}
}

// smallDisk mounts a tmpfs of size on a fresh directory, or skips the
// test where the machine does not allow it.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (needs root): %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill fills the disk dir is on and returns the file that fills it.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return path
		}
	}
}

func readLog(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "stdout"))
	if errors.Is(err, os.ErrNotExist) {
		b, err = os.ReadFile(filepath.Join(dir, "stderr"))
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// abbreviate keeps a long log's ends, for a message.
func abbreviate(s string) string {
	if len(s) <= 200 {
		return s
	}
	return s[:100] + "…" + s[len(s)-100:]
}

// TestLogsServeTheLossTheDiskStillRefuses runs a task that fills the
// disk under its home, then writes 100000 bytes and exits 0: its log
// cannot hold them, nor a marker, nor the journal its end (the journal is
// padded first to just short of a page, which a tmpfs gives whole or
// not at all). The attempt still succeeds, its status counts the bytes
// lost, and its served log ends with the marker, once, whether the end
// is answered by the supervisor's memory or, once space is freed, by the
// journal.
func TestLogsServeTheLossTheDiskStillRefuses(t *testing.T) {
	disk := smallDisk(t, "4m")
	home := filepath.Join(disk, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHarnessIn(t, home)
	filler, start := filepath.Join(disk, "filler"), filepath.Join(disk, "start")
	spec := h.launch(t, "r/loud/1", "sh", "-c", "until [ -e "+start+" ]; do sleep 0.01; done; "+
		"dd if=/dev/zero of="+filler+" bs=64k 2>/dev/null; head -c 100000 /dev/zero | tr '\\0' x; exit 0")
	padJournal(t, home, "r")
	if err := os.WriteFile(start, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st := h.waitExit(t, spec)
	if !st.Succeeded() {
		t.Fatalf("the task ended %+v, want it to succeed: a lost log does not change its outcome", st)
	}
	if want := []job.LogLoss{{Log: "stdout", Bytes: 100000, Cause: "disk full"}}; !slices.Equal(st.LogsLost, want) {
		t.Errorf("LogsLost = %+v, want %+v", st.LogsLost, want)
	}
	if recs, err := readRecords(home, spec.ID.String()); err != nil || recs.exit != nil {
		t.Fatalf("the journal holds the end of the attempt (%v): the test did not fill its page", err)
	}
	const mark = "[kiln: 100000 bytes lost: disk full]\n"
	if got := h.logsOf(t, spec.ID, backend.LogOptions{}); got != mark {
		t.Errorf("logs on a full disk = %q, want only the marker %q", got, mark)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; runtimeGosched() {
		if recs, err := readRecords(home, spec.ID.String()); err == nil && recs.exit != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the supervisor never wrote the attempt's end once space was freed")
		}
	}
	if got := h.logsOf(t, spec.ID, backend.LogOptions{Follow: true}); got != mark {
		t.Errorf("logs once the end is in the journal = %q, want only the marker %q", got, mark)
	}
}

// padJournal appends to run's journal a line of no attempt that leaves
// its last page 8 bytes short of full.
func padJournal(t *testing.T, home, run string) {
	t.Helper()
	f, err := os.OpenFile(journalPath(home, run), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	const page, frame = 4096, len(`{"id":"` + "r/pad/1" + `","pad":""}` + "\n")
	n := page - int(fi.Size()%page) - 8 - frame
	if n < 0 {
		n += page
	}
	line := `{"id":"r/pad/1","pad":"` + strings.Repeat("x", n) + `"}` + "\n"
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
}
