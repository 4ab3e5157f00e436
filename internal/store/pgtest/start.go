package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// start makes a cluster in a new scratch directory and starts postgres on
// it, trying another port if the one chosen was taken meanwhile.
func start(bin string, opt Options) (*Server, error) {
	dir, err := os.MkdirTemp("", "kiln-pg-")
	if err != nil {
		return nil, err
	}
	password := rand.Text()
	cred, err := credential(dir)
	if err == nil {
		err = initdb(bin, dir, password, cred)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	for try := 0; ; try++ {
		s, err := serve(bin, dir, password, cred, opt)
		if err == nil || try == 2 {
			if err != nil {
				os.RemoveAll(dir)
			}
			return s, err
		}
	}
}

// credential is who runs PostgreSQL: this process, or, for root (which
// PostgreSQL refuses), the postgres user or nobody, made owner of dir.
func credential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var u *user.User
	var err error
	for _, name := range []string{"postgres", "nobody"} {
		if u, err = user.Lookup(name); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("running as root, and no postgres or nobody user to run PostgreSQL as: %w", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	if err := os.Chown(dir, int(uid), int(gid)); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

// command is name from bin, run as cred, in dir.
func command(bin, name, dir string, cred *syscall.Credential, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	return cmd
}

// initdb makes the cluster: its superuser logs in over TCP with password
// (so that tests can see a wrong one refused), over the socket freely.
func initdb(bin, dir, password string, cred *syscall.Credential) error {
	pwfile := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600); err != nil {
		return err
	}
	if cred != nil {
		if err := os.Chown(pwfile, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	defer os.Remove(pwfile)
	cmd := command(bin, "initdb", dir, cred, "-D", filepath.Join(dir, "data"), "-U", superuser, "--pwfile", pwfile,
		"--auth-local=trust", "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-sync")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w: %s", err, out)
	}
	return nil
}

// serve starts postgres and waits until it takes connections.
func serve(bin, dir, password string, cred *syscall.Credential, opt Options) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	socketDir := dir
	if len(dir)+len("/.s.PGSQL.65535") > 100 { // a unix socket's path is short; the DSNs use TCP anyway
		socketDir = ""
	}
	args := []string{
		"-D", filepath.Join(dir, "data"), "-p", strconv.Itoa(port), "-k", socketDir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200",
	}
	if !opt.Durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	cmd := command(bin, "postgres", dir, cred, args...)
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT // an immediate shutdown if the tests die unawares
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	s := &Server{bin: bin, dir: dir, port: port, password: password, cmd: cmd, done: make(chan struct{})}
	if err := s.run(); err != nil {
		return nil, err
	}
	if err := s.waitReady(30 * time.Second); err != nil {
		_ = cmd.Process.Kill()
		<-s.done
		return nil, fmt.Errorf("%w: %s", err, log.String())
	}
	return s, nil
}

// run starts postgres from a goroutine locked to its thread until
// postgres exits: the parent-death signal follows the thread that started
// the process, and a thread of the Go runtime may otherwise end at any
// time. The thread ends with the test process, killed or not.
func (s *Server) run() error {
	started := make(chan error)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := s.cmd.Start()
		started <- err
		if err == nil {
			_ = s.cmd.Wait()
			close(s.done)
		}
	}()
	return <-started
}

// waitReady waits until the server takes a connection, or exits.
func (s *Server) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgx.Connect(ctx, s.DSN("postgres"))
		cancel()
		if err == nil {
			return c.Close(context.Background())
		}
		select {
		case <-s.done:
			return errors.New("postgres exited")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres took no connection in %s: %w", limit, err)
		}
	}
}
