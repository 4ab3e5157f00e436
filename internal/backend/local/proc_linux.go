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

// forkTicks returns the ticks between which process pid, forked since
// bootTicks read before, started: the kernel stamps a process with that
// clock as it forks it, so its start time as /proc gives it lies between
// the two reads, one tick when the clock did not tick during the fork.
// With the PID it identifies the process after its supervisor is gone:
// a PID is used again only once the kernel has gone round every other,
// never within one fork. Only if the clock cannot be read is /proc read.
func forkTicks(pid int, before uint64) [2]uint64 {
	if after := bootTicks(); before != 0 && after >= before {
		return [2]uint64{before, after}
	}
	t := startTicks(pid)
	return [2]uint64{t, t}
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
