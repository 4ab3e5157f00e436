package local

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
