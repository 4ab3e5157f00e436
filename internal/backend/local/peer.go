package local

import (
	"bufio"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// trusted reports whether the process at the other end of c may drive the
// supervisor: one of kiln's own user (or root), and not a task kiln
// confined. Confined tasks run with no_new_privs, which nothing else of
// kiln's sets; where kiln itself runs with it (a service manager's
// setting), that cannot tell them apart and the socket's mode is all there
// is.
func trusted(c net.Conn) bool {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	cerr := raw.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) //nolint:gosec // a descriptor fits an int
	})
	if cerr != nil || err != nil {
		return false
	}
	if cred.Uid != 0 && int(cred.Uid) != os.Geteuid() {
		return false
	}
	return selfNoNewPrivs || !noNewPrivs(strconv.Itoa(int(cred.Pid)))
}

// selfNoNewPrivs is whether the supervisor itself runs with no_new_privs.
var selfNoNewPrivs = noNewPrivs("self")

// noNewPrivs reads a process's no_new_privs flag from /proc.
func noNewPrivs(pid string) bool {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "NoNewPrivs:"); ok {
			return strings.TrimSpace(v) == "1"
		}
	}
	return false
}

// HideProcess makes this process's /proc entries (its environment, its
// memory) readable by root alone, as for a set-user-ID program: a task
// running as kiln's user cannot read the server's or the supervisor's
// environment through /proc/PID/environ. It also turns off core dumps.
func HideProcess() {
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
