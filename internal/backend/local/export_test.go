package local

import (
	"syscall"
	"time"
)

// runtimeGosched yields briefly while a test polls for a condition with a deadline.
func runtimeGosched() {
	<-time.After(5 * time.Millisecond)
}

// killSupervisor kills the supervisor serving home, if one runs, and waits
// until it is gone, so that nothing writes into home while the test's
// cleanup removes it. It never starts a supervisor to ask its PID.
func killSupervisor(home string) {
	pid := SupervisorPID(home)
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); runtimeGosched() {
		if syscall.Kill(pid, 0) != nil {
			return
		}
	}
}
