package local

import (
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// clockTicks is USER_HZ, the unit of the start times in /proc: 100 on
// every architecture kiln is built for.
const clockTicks = 100

// tickNanos is the length of a tick in nanoseconds.
const tickNanos = 1e9 / clockTicks

// bootNanos reads the clock the kernel stamps a process with when it
// forks it (CLOCK_BOOTTIME), in nanoseconds, or 0 if it cannot.
func bootNanos() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil || ts.Nano() <= 0 {
		return 0
	}
	return ts.Nano()
}

// bootClock reads the boot clock after a fork with a system call, and
// before one without: its last reading plus the monotonic time since
// (read through the vDSO), which is never ahead of it, since the boot
// clock runs as the monotonic one does and also while the machine is
// suspended.
type bootClock struct {
	mu   sync.Mutex
	boot int64     // a reading of the boot clock, in nanoseconds
	at   time.Time // taken just after it, for its monotonic reading
}

// forkClock is the clock launches are timed by.
var forkClock bootClock

// before returns a tick no later than the boot clock's now.
func (c *bootClock) before() uint64 {
	c.mu.Lock()
	boot, at := c.boot, c.at
	c.mu.Unlock()
	if boot == 0 {
		return c.now()
	}
	return uint64(boot+int64(time.Since(at))) / tickNanos //nolint:gosec // positive
}

// now reads the boot clock, in ticks, and keeps the reading; 0 if it
// cannot be read.
func (c *bootClock) now() uint64 {
	ns := bootNanos()
	at := time.Now()
	if ns == 0 {
		return 0
	}
	c.mu.Lock()
	c.boot, c.at = ns, at
	c.mu.Unlock()
	return uint64(ns) / tickNanos
}

// forkTicks returns the ticks between which process pid, forked after
// before (forkClock.before), started: the kernel stamps a process with
// the boot clock as it forks it, so its start time as /proc gives it lies
// between before and the clock's reading now, one tick when the clock did
// not tick during the fork. With the PID it identifies the process after
// its supervisor is gone: a PID is used again only once the kernel has
// gone round every other, so another process of the same PID alive then
// started after this one ended, after the fork, never within it. Only if
// the clock cannot be read is /proc read.
func forkTicks(pid int, before uint64) [2]uint64 {
	if after := forkClock.now(); before != 0 && after >= before {
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
