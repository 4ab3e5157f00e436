package local

import (
	"strconv"
	"strings"
	"syscall"
)

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
