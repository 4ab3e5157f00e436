package local

import (
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// waitExit waits for a started command to end and reaps it. The wait is
// on a pidfd in Go's netpoller: no thread is blocked for the process, and
// nothing polls. The pidfd is a descriptor of its own, non-blocking, so
// that it does not change the one os/exec keeps for cmd.Wait. Where the
// kernel has no pidfds (before 5.10), cmd.Wait blocks a thread as before.
func waitExit(cmd *exec.Cmd) {
	pid := cmd.Process.Pid
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err == nil {
		f := os.NewFile(uintptr(fd), "pidfd") // registered with the netpoller: it is non-blocking
		if rc, err := f.SyscallConn(); err == nil {
			woke := false
			_ = rc.Read(func(fd uintptr) bool {
				if woke {
					return true // a pidfd is readable once its process has exited
				}
				woke = true
				return exited(fd) // it may have exited before the netpoller watched
			})
		}
		f.Close()
	}
	_ = cmd.Wait() // it has exited: this reaps it at once
}

// exited reports whether the process of pidfd fd has exited, leaving it
// to be reaped; false makes the netpoller wait until fd is readable.
func exited(fd uintptr) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil) //nolint:gosec // a descriptor fits an int
	// si_signo is SIGCHLD once it has exited; zero while it runs.
	return err != nil || info.Signo != 0
}
