// Package proctest finds and stops the processes a test started, by a
// mark in their command line or environment, so that none outlives the
// test and writes into what its cleanup removes.
package proctest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Marked lists the processes, other than this one, whose command line or
// environment holds mark as a whole argument or variable.
func Marked(mark string) []int {
	whole := []byte(mark + "\x00")
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == os.Getpid() {
			continue
		}
		for _, f := range []string{"cmdline", "environ"} {
			if b, err := os.ReadFile(filepath.Join(d, f)); err == nil && bytes.Contains(append(b, 0), whole) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// Alive reports whether pid runs (a zombie does not).
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z'
}

// KillAndWait kills pids with SIGKILL and waits, up to 10 seconds each,
// until they are gone.
func KillAndWait(pids []int) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, pid := range pids {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && Alive(pid); <-time.After(5 * time.Millisecond) {
		}
	}
}
