package local

import (
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// clockTicks is USER_HZ, the unit of the start times in /proc: 100 on
// every architecture kiln is built for.
const clockTicks = 100

// bootTicks reads the clock the kernel stamps a process with when it
// forks it (CLOCK_BOOTTIME), in the ticks /proc gives its start time in,
// or 0 if it cannot.
func bootTicks() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil || ts.Nano() <= 0 {
		return 0
	}
	return uint64(ts.Nano()) / (1e9 / clockTicks)
}

// forkTicks returns the start time of process pid, forked since
// bootTicks read before: the process was stamped between the two reads
// of the clock, so if it has not ticked since, that tick is the start
// time, and /proc is read only when it has (a fork that spans a tick, a
// few in a hundred). With the PID it is the launch's record of who the
// process is (supervisor_ops.go kills a lost attempt's processes only if
// both still match).
func forkTicks(pid int, before uint64) uint64 {
	if before != 0 && bootTicks() == before {
		return before
	}
	return startTicks(pid)
}

// startTicks returns the start time of process pid in clock ticks since
// boot, from /proc, or 0 if the process does not exist. With the PID it
// identifies a process even after its PID is reused.
func startTicks(pid int) uint64 {
	// Three calls, where os.ReadFile makes five: one per launched process.
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer syscall.Close(fd)
	var buf [4096]byte
	n, err := syscall.Read(fd, buf[:])
	if err != nil || n <= 0 {
		return 0
	}
	// The command name in field 2 may hold spaces; fields after it are plain.
	s := string(buf[:n])
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 20 {
		return 0
	}
	n64, _ := strconv.ParseUint(fields[19], 10, 64)
	return n64
}

// ProcessStartTicks returns the start time of process pid in clock ticks
// since boot, or 0 if there is no such process. With the PID it identifies
// a process for good, even after its PID is reused.
func ProcessStartTicks(pid int) uint64 { return startTicks(pid) }
