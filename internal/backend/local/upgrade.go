package local

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
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
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if err := unix.PidfdSendSignal(fd, unix.SIGTERM, nil, 0); err != nil {
		return false
	}
	// Its pidfd is readable once it has exited, and its lock went with it.
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}} //nolint:gosec // a descriptor fits an int32
	deadline := time.Now().Add(replaceWait)
	n, err := unix.Poll(fds, int(replaceWait.Milliseconds()))
	for errors.Is(err, unix.EINTR) && time.Now().Before(deadline) { // the runtime's signals
		n, err = unix.Poll(fds, int(time.Until(deadline).Milliseconds())+1)
	}
	return err == nil && n == 1 && SupervisorPID(home) != pid
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
