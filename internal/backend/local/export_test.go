package local

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// runtimeGosched yields briefly while a test polls for a condition with a deadline.
func runtimeGosched() {
	<-time.After(5 * time.Millisecond)
}

// killSupervisor kills every supervisor started for home: the one serving
// it, and any other still starting, which would find the home taken and
// exit, but could first create files in it. It waits until they are
// gone, so that nothing writes into home while the test's cleanup
// removes it. It never starts a supervisor to ask its PID.
func killSupervisor(home string) {
	pids := supervisorsOf(home)
	if pid := SupervisorPID(home); pid > 0 {
		pids = append(pids, pid)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, pid := range pids {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && alive(pid); runtimeGosched() {
		}
	}
}

// supervisorsOf lists the processes the test harnesses started as home's
// supervisor: KILN_TEST_SUPERVISOR_HOME=home in their arguments (before
// /usr/bin/env runs the test binary) or their environment (after).
func supervisorsOf(home string) []int {
	mark := []byte("KILN_TEST_SUPERVISOR_HOME=" + home + "\x00")
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == os.Getpid() {
			continue
		}
		for _, f := range []string{"cmdline", "environ"} {
			if b, err := os.ReadFile(filepath.Join(d, f)); err == nil && bytes.Contains(append(b, 0), mark) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z'
}
