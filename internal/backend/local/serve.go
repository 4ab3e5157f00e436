package local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// ServeConfig configures a supervisor process.
type ServeConfig struct {
	// Home is the kiln home the supervisor serves.
	Home string
	// IdleTimeout ends the supervisor once no attempt has run and no
	// engine has been connected for this long. Default 10 minutes.
	IdleTimeout time.Duration
}

// Serve runs the supervisor of cfg.Home until ctx ends or it is idle. If
// another supervisor already serves that home, Serve returns nil at once.
func Serve(ctx context.Context, cfg ServeConfig) error {
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 10 * time.Minute
	}
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		return err
	}
	HideProcess()
	lock, err := os.OpenFile(filepath.Join(cfg.Home, "supervisor.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		signalReady() // another supervisor holds the home: the engine dials that one
		return nil
	}
	if err := writePID(lock); err != nil {
		return err
	}
	sock := SocketPath(cfg.Home)
	_ = os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", sock, err)
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		ln.Close()
		return err
	}
	defer os.Remove(sock)
	sup := NewSupervisor(cfg.Home)
	var conns atomic.Int64
	go acceptLoop(ln, sup, &conns)
	signalReady()
	tick := time.NewTicker(cfg.IdleTimeout / 10)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ln.Close()
		case <-tick.C:
			sup.writeUnwritten()
			sup.journal.closeIdle(cfg.IdleTimeout / 10)
			if conns.Load() == 0 && sup.idle(cfg.IdleTimeout) {
				return ln.Close()
			}
		}
	}
}

// readyEnv names the descriptor on which the engine that started the
// supervisor waits for one byte: the supervisor listens, or another one
// holds the home (spawn, local.go).
const readyEnv = "KILN_SUPERVISOR_READY_FD"

// signalReady writes the byte the starting engine waits for, once, and
// closes the descriptor, so that no attempt inherits it.
func signalReady() {
	v := os.Getenv(readyEnv)
	if v == "" {
		return
	}
	_ = os.Unsetenv(readyEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return
	}
	f := os.NewFile(uintptr(fd), "ready")
	_, _ = f.Write([]byte{1})
	_ = f.Close()
}

// acceptLoop serves each engine's connection as a session of its own.
func acceptLoop(ln net.Listener, sup *Supervisor, conns *atomic.Int64) {
	for {
		c, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		if !trusted(c) {
			c.Close()
			continue
		}
		sess := newSession(sup)
		conns.Add(1)
		sup.touch()
		go func() {
			serveConn(c, sess)
			sess.end()
			conns.Add(-1)
			sup.touch()
		}()
	}
}

// writePID records the supervisor's PID in its lock file, for people and tools.
func writePID(lock *os.File) error {
	if err := lock.Truncate(0); err != nil {
		return err
	}
	_, err := lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// SupervisorPID returns the PID of the supervisor serving home, or 0 if
// none holds its lock.
func SupervisorPID(home string) int {
	f, err := os.Open(filepath.Join(home, "supervisor.lock"))
	if err != nil {
		return 0
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		return 0 // nobody holds it
	}
	b := make([]byte, 32)
	n, _ := f.Read(b)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	return pid
}
