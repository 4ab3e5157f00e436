package local

import (
	"time"

	"kiln.dev/kiln/internal/proctest"
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
	pids := proctest.Marked("KILN_TEST_SUPERVISOR_HOME=" + home)
	if pid := SupervisorPID(home); pid > 0 {
		pids = append(pids, pid)
	}
	proctest.KillAndWait(pids)
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool { return proctest.Alive(pid) }
