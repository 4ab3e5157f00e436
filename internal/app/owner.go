package app

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"kiln.dev/kiln/internal/backend/local"
)

// ownerID names this engine process in run leases: host, PID and the
// process's start time, so a reused PID is never mistaken for it.
func ownerID() string {
	host, _ := os.Hostname()
	pid := os.Getpid()
	return fmt.Sprintf("%s:%d:%d", host, pid, local.ProcessStartTicks(pid))
}

// ownerDead reports whether the engine named owner is certainly gone: it
// ran on this host and its process no longer exists. Engines on other
// hosts are left to their lease's expiry.
func ownerDead(owner string) bool {
	parts := strings.Split(owner, ":")
	if len(parts) != 3 {
		return false
	}
	host, _ := os.Hostname()
	pid, err1 := strconv.Atoi(parts[1])
	ticks, err2 := strconv.ParseUint(parts[2], 10, 64)
	if parts[0] != host || err1 != nil || err2 != nil {
		return false
	}
	return local.ProcessStartTicks(pid) != ticks
}
