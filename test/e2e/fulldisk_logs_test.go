package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// lostMarker is the marker kiln puts in a log that lost bytes.
var lostMarker = regexp.MustCompile(`\[kiln: (\d+) bytes lost: disk full\]`)

// loudWorkflow's one task fills the disk its home is on, writes 200000
// "x" and a newline to stdout, then runs tail, and exits 0.
func loudWorkflow(t *testing.T, disk, tail string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), "loud.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: loud}
spec:
  tasks:
  - name: loud
    command: [sh, -c, "dd if=/dev/zero of=`+filepath.Join(disk, "filler")+` bs=64k 2>/dev/null; head -c 200000 /dev/zero | tr '\\0' x; echo; `+tail+` exit 0"]
`)
}

// TestALogThatLostBytesToAFullDiskSaysWhere fills the disk while a task
// writes, frees it before the task writes its last line: the task
// succeeds, its log says how many bytes it lost, once, at the place they
// went missing, and describe and the API say so too.
func TestALogThatLostBytesToAFullDiskSaysWhere(t *testing.T) {
	t.Parallel()
	disk := smallDisk(t, "8m")
	home, written := filepath.Join(disk, "home"), filepath.Join(disk, "written")
	filler := filepath.Join(disk, "filler")
	cmd, stderr := startWatched(t, home, "run", loudWorkflow(t, disk,
		"touch "+written+"; until [ ! -e "+filler+" ]; do sleep 0.01; done; echo after;"))
	waitFor(t, "the task to write on the full disk", func() bool { _, err := os.Stat(written); return err == nil })
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(cmd, time.Minute); err != nil {
		t.Fatalf("kiln run: %v\n%s", err, stderr.String())
	}
	logs, lost := checkLostLog(t, home)
	if before, _, _ := strings.Cut(logs, lostMarker.FindString(logs)); !strings.Contains(logs, "after\n") || strings.Contains(before, "after") {
		t.Errorf("the marker is not where the bytes were lost, before the line written once space was freed:\n%s", abbreviated(logs))
	}
	if n := strings.Count(logs, "x"); int64(n)+lost < 200000 || int64(n)+lost > 200001 {
		t.Errorf("the log holds %d x and says %d bytes were lost: the task wrote 200000 and a newline", n, lost)
	}
}

// TestALogLossOnADiskFullToTheEndIsServed keeps the disk full until the
// task has ended, so that no marker fits in its log: the loss reaches
// the engine with the attempt's end, and kiln logs ends the log with the
// marker, once.
func TestALogLossOnADiskFullToTheEndIsServed(t *testing.T) {
	t.Parallel()
	disk := smallDisk(t, "6m")
	home := filepath.Join(disk, "home")
	cmd, stderr := startWatched(t, home, "run", loudWorkflow(t, disk, ""))
	waitFor(t, "the supervisor to record the task's end", func() bool {
		journals, _ := filepath.Glob(filepath.Join(home, "runs", "*", "_attempts.jsonl"))
		for _, j := range journals {
			if b, err := os.ReadFile(j); err == nil && strings.Contains(string(b), `"exit":`) {
				return true
			}
		}
		return false
	})
	if err := os.Remove(filepath.Join(disk, "filler")); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(cmd, time.Minute); err != nil {
		t.Fatalf("kiln run: %v\n%s", err, stderr.String())
	}
	logs, lost := checkLostLog(t, home)
	if strings.Contains(logs, "x") || lost != 200001 {
		t.Errorf("the log of a disk full from the start holds %d x and says %d bytes were lost, want none and 200001:\n%s",
			strings.Count(logs, "x"), lost, abbreviated(logs))
	}
	if !strings.HasSuffix(logs, lostMarker.FindString(logs)+"\n") {
		t.Errorf("the marker does not end the log:\n%s", abbreviated(logs))
	}
}

// checkLostLog checks that home's one run succeeded though its task's
// stdout lost bytes: kiln logs says so once, the attempt's logsLost and
// describe's attempt row and events agree. It returns the log and the
// bytes lost.
func checkLostLog(t *testing.T, home string) (string, int64) {
	t.Helper()
	id := runs(t, home)[0].ID
	run := describe(t, home, id)
	if run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run ended %s: %s; a lost log must not change its outcome", run.Status.Phase, run.Status.Message)
	}
	r := kiln(t, home, "logs", string(id), "loud")
	if r.code != 0 {
		t.Fatalf("kiln logs: %d %s", r.code, r.stderr)
	}
	found := lostMarker.FindAllStringSubmatch(r.stdout, -1)
	if len(found) != 1 {
		t.Fatalf("kiln logs shows the marker %d times, want once:\n%s", len(found), abbreviated(r.stdout))
	}
	lost, _ := strconv.ParseInt(found[0][1], 10, 64)
	if lost <= 0 || lost > 200001 {
		t.Errorf("the marker says %d bytes were lost; the task wrote 200001", lost)
	}
	at := run.Status.Nodes[0].Attempts[0]
	if at.Phase != apiv1.PhaseSucceeded || at.LogsLost["stdout"] != lost || len(at.LogsLost) != 1 {
		t.Errorf("attempt %s with logsLost %v, want Succeeded with stdout's %d bytes", at.Phase, at.LogsLost, lost)
	}
	text := kiln(t, home, "describe", "run", string(id)).stdout
	for _, want := range []string{
		"(KLN-6011 logs lost: stdout " + strconv.FormatInt(lost, 10) + " bytes)",
		"KLN-6011 the attempt's logs could not be written whole: stdout lost " + strconv.FormatInt(lost, 10) + " bytes (disk full)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("describe does not say %q:\n%s", want, text)
		}
	}
	return r.stdout, lost
}

// abbreviated keeps a long log's ends, for a message.
func abbreviated(s string) string {
	if len(s) <= 400 {
		return s
	}
	return s[:200] + "…" + s[len(s)-200:]
}
