package local

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// replaceWait bounds the wait for an idle older supervisor to let go of
// the home once asked to stop.
const replaceWait = 5 * time.Second

// replaceIdle stops the older supervisor pid of home if it runs nothing:
// no process of its own (an attempt's, or one left to end on its own,
// or one not reaped yet). It reports whether the home is free for a
// supervisor of this build. One that runs something is left alone: its
// attempts are not to be lost to an upgrade. Its idle timeout cannot be
// waited for, since every engine that knocks counts as use.
func replaceIdle(home string, pid int) bool {
	if pid <= 0 || hasChildren(pid) {
		return false
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return false
	}
	deadline := time.Now().Add(replaceWait)
	for SupervisorPID(home) == pid {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond) // a rare path: once per upgrade
	}
	return true
}

// hasChildren reports whether process pid has children; true when that
// cannot be read, so that nothing is stopped on a guess.
func hasChildren(pid int) bool {
	files, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	if err != nil || len(files) == 0 {
		return true
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || strings.TrimSpace(string(b)) != "" {
			return true
		}
	}
	return false
}
