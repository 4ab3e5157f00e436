// Package pgtest starts a real PostgreSQL server for tests, from the
// binaries of Debian's postgresql package: initdb makes a cluster in a
// scratch directory, and postgres serves it on 127.0.0.1, on a free port,
// and on a unix socket in that directory, until the test (or the test
// binary) ends. Nothing is faked and nothing outside the directory is
// touched.
//
// The binaries are found on PATH or under /usr/lib/postgresql/*/bin (the
// newest). Where there are none, tests that ask for a server are skipped,
// unless KILN_REQUIRE_PG=1, where they fail saying which package to
// install. PostgreSQL refuses to run as root: a root test process runs
// initdb and postgres as the postgres user (or nobody), owning the
// scratch directory. The superuser, kiln, logs in over TCP with a random
// password (in the DSNs), and the server is tuned for tests (no fsync)
// unless Durable is set.
//
// One server per test:
//
//	srv := pgtest.Start(t)        // stopped by t.Cleanup
//	dsn := srv.NewDatabase(t)     // a fresh, empty database
//
// One server per test binary, shared by its tests (each taking its own
// database), stopped when the tests end, whatever happens:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//	func TestX(t *testing.T) { dsn := pgtest.Shared(t).NewDatabase(t) }
//
// End-to-end tests hand such a DSN to the servers they start; New starts
// a server outside a test (the benchmark), stopped with Stop.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// RequireEnv names the variable that turns a missing PostgreSQL into a
// failure instead of a skip.
const RequireEnv = "KILN_REQUIRE_PG"

// user is the database superuser that initdb makes, and that the DSNs use.
const superuser = "kiln"

// Options tune a server.
type Options struct {
	// Durable keeps PostgreSQL's defaults (fsync, synchronous commit, full
	// page writes), for benchmarks; by default they are off, for speed.
	Durable bool
}

// Server is a running PostgreSQL server in a scratch directory.
type Server struct {
	bin      string // the directory of initdb, postgres and pg_dump
	dir      string
	port     int
	password string
	cmd      *exec.Cmd
	done     chan struct{}
	next     atomic.Int64
	stop     sync.Once
}

// Start starts a server for tb, stopped and removed by tb.Cleanup.
func Start(tb testing.TB) *Server { return StartWith(tb, Options{}) }

// StartWith starts a server tuned by opt for tb, stopped by tb.Cleanup.
func StartWith(tb testing.TB, opt Options) *Server {
	tb.Helper()
	s, err := New(opt)
	if errors.Is(err, ErrNotInstalled) {
		missing(tb, err)
	}
	if err != nil {
		tb.Fatalf("starting PostgreSQL: %v", err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// ErrNotInstalled is New's error where PostgreSQL's binaries are missing.
var ErrNotInstalled = errors.New("PostgreSQL is not installed")

// New starts a server outside a test (a benchmark, a TestMain); the
// caller stops it with Stop.
func New(opt Options) (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotInstalled, err)
	}
	return start(bin, opt)
}

// missing skips tb for want of PostgreSQL, or fails it if KILN_REQUIRE_PG=1.
func missing(tb testing.TB, err error) {
	tb.Helper()
	msg := fmt.Sprintf("%v: install Debian's postgresql package (apt-get install postgresql)", err)
	if os.Getenv(RequireEnv) == "1" {
		tb.Fatal(msg + "; " + RequireEnv + "=1 makes this a failure")
	}
	tb.Skip(msg)
}

var shared struct {
	sync.Mutex
	srv *Server
	err error
}

// Shared is the server of this test binary, started on first use and
// stopped by Main. Tests using it take a database each (NewDatabase).
func Shared(tb testing.TB) *Server {
	tb.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = New(Options{})
	}
	if errors.Is(shared.err, ErrNotInstalled) {
		missing(tb, shared.err)
	}
	if shared.err != nil {
		tb.Fatalf("starting PostgreSQL: %v", shared.err)
	}
	return shared.srv
}

// Main runs m's tests and stops the shared server, if they started it,
// even when a test panics. Its result is the exit code for os.Exit.
func Main(m *testing.M) int {
	defer StopShared()
	return m.Run()
}

// StopShared stops the shared server, if it was started: for a TestMain
// that calls m.Run itself. Should the test process die without it (a
// timeout, a kill), the server gets an immediate shutdown.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.srv != nil {
		shared.srv.Stop()
	}
}

// DSN is the address of database db on s, over TCP, with the password.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", superuser, s.password, s.port, db)
}

// Password is the superuser's password, random for each server.
func (s *Server) Password() string { return s.password }

// NewDatabase makes a fresh, empty database on s and returns its DSN.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	dsn, err := s.CreateDatabase(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	return dsn
}

// CreateDatabase is NewDatabase outside a test.
func (s *Server) CreateDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("kiln_%d_%d", os.Getpid(), s.next.Add(1))
	if err := s.exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("creating database %s: %w", name, err)
	}
	return s.DSN(name), nil
}

// exec runs one statement as the superuser, in the postgres database.
func (s *Server) exec(ctx context.Context, sql string) error {
	c, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, sql)
	return err
}

// Stop stops the server (a fast shutdown, then a kill if it lingers) and
// removes its directory. It may be called more than once.
func (s *Server) Stop() {
	s.stop.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-s.done:
			case <-time.After(10 * time.Second):
				_ = s.cmd.Process.Kill()
				<-s.done
			}
		}
		_ = os.RemoveAll(s.dir)
	})
}

// findBin is the directory holding initdb and postgres.
func findBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if dir := filepath.Dir(p); exists(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) }) // newest first
	for _, d := range dirs {
		if exists(filepath.Join(d, "initdb")) && exists(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("no initdb on PATH or under /usr/lib/postgresql/*/bin")
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// freePort is a TCP port on 127.0.0.1 that nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
