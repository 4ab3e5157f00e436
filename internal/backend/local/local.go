// Package local runs attempts as processes on this machine.
//
// One supervisor process per $KILN_HOME (the kiln binary in a hidden mode,
// in its own session) forks every attempt, waits on it, and writes its exit
// status to the attempt's directory. Engines talk to it over a unix socket.
// The engine can die and come back: the supervisor and its attempts go on,
// and the files hold the truth.
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/resource"
)

// Config configures the local backend.
type Config struct {
	// Home is $KILN_HOME.
	Home string
	// SupervisorCommand starts a supervisor for Home when none runs, for
	// example [kiln supervise --home H]. It is started in its own session.
	SupervisorCommand []string
	// StartTimeout bounds the wait for a new supervisor. Default 10s.
	StartTimeout time.Duration
	// Isolation is how this engine's tasks are kept apart from kiln and
	// from other projects' tasks; the zero value isolates nothing.
	Isolation Isolation
}

// Backend is the local backend.
type Backend struct {
	cfg Config

	mu       sync.Mutex
	client   *supConn
	room     map[string]resource.Claim // admitted attempts' claims, for their launch
	handover map[string][]string       // per new attempt, ended attempts whose room it was handed
	alone    atomic.Bool               // the supervisor last said no other engine waits for room
	grants   chan struct{}             // room was granted to the engine's waiters
}

var (
	_ backend.Backend  = (*Backend)(nil)
	_ backend.Notifier = (*Backend)(nil)
)

// New returns a local backend. It connects to the supervisor on first use.
func New(cfg Config) *Backend {
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 10 * time.Second
	}
	return &Backend{cfg: cfg, room: map[string]resource.Claim{}, handover: map[string][]string{}, grants: make(chan struct{}, 1)}
}

// Launch implements backend.Backend. Launches made at the same time
// travel together in one frame.
func (b *Backend) Launch(ctx context.Context, spec *job.Spec) error {
	id := spec.ID.String()
	args := &StartArgs{
		ID: id, WorkingDir: spec.WorkingDir, Files: spec.Files, Leader: spec.Leader, MinHosts: spec.MinHosts,
		Sandbox: b.cfg.Isolation.sandbox(spec.Project), Leave: spec.Clean == job.CleanNone, Memory: spec.Container.Memory,
	}
	takeBack := b.startArgs(args)
	args.Processes = make([]ProcessArgs, 0, len(spec.Processes))
	for _, p := range spec.Processes {
		args.Processes = append(args.Processes, ProcessArgs{Name: p.Name, Command: p.Command, Env: p.Env, Host: p.Host})
	}
	var contended bool
	err := b.retry(ctx, func(c *supConn) (err error) {
		contended, err = c.launch(ctx, args)
		return err
	})
	if err != nil {
		takeBack()
		return err
	}
	b.alone.Store(!contended)
	return nil
}

// Observe implements backend.Backend.
func (b *Backend) Observe(ctx context.Context, spec *job.Spec) (job.Status, error) {
	var r StateReply
	if err := b.call(ctx, "Supervisor.State", StateArgs{ID: spec.ID.String()}, &r); err != nil {
		return job.Status{}, err
	}
	switch {
	case r.Running:
		return job.Status{State: job.StateRunning, Dropped: r.Dropped}, nil
	case r.Lost:
		return job.Status{State: job.StateLost, ExitCode: -1, System: true}, nil
	case !r.Exited:
		return job.Status{State: job.StateUnknown}, nil
	}
	st := r.Status.jobStatus()
	if st.ExitCode == 0 && st.StartError == "" {
		// Outputs are read beneath the attempt's directory, which the task
		// cannot replace, so that outputs/ itself cannot be a link away.
		dir := AttemptDir(b.cfg.Home, spec.ID)
		st.Outputs, st.OutputError = readOutputs(dir, spec.Outputs)
		if st.OutputError == "" {
			st.OutputError = missingArtifact(dir, spec.Artifacts)
		}
	}
	return st, nil
}

// outputsDir is the attempt's output directory, $KILN_OUTPUTS, relative
// to the attempt's directory.
const outputsDir = "outputs"

// maxOutput is the largest output parameter kept in the store.
const maxOutput = 256 << 10

func readOutputs(dir string, names []string) (map[string]string, string) {
	if len(names) == 0 {
		return nil, ""
	}
	out := make(map[string]string, len(names))
	for _, name := range names {
		b, err := readRegular(dir, path.Join(outputsDir, name), maxOutput)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Sprintf("output parameter %q was not written to $KILN_OUTPUTS/%s", name, name)
		case err != nil:
			return nil, escapeMessage(fmt.Sprintf("output parameter %q", name), err)
		case len(b) > maxOutput:
			return nil, fmt.Sprintf("output parameter %q is %d bytes, at most %d are kept; write large data as an artifact", name, len(b), maxOutput)
		}
		out[name] = strings.TrimRight(string(b), "\n")
	}
	return out, ""
}

// missingArtifact names the first declared artifact that is not in dir.
func missingArtifact(dir string, paths []string) string {
	for _, p := range paths {
		err := statBeneath(dir, path.Join(outputsDir, p))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Sprintf("output artifact %q was not written to $KILN_OUTPUTS/%s", p, p)
		case err != nil:
			return escapeMessage(fmt.Sprintf("output artifact %q", p), err)
		}
	}
	return ""
}

// Abort implements backend.Backend.
func (b *Backend) Abort(ctx context.Context, id job.AttemptID, grace time.Duration) error {
	return b.call(ctx, "Supervisor.Signal", SignalArgs{ID: id.String(), Grace: grace}, &Empty{})
}

// OutputDir implements backend.Backend.
func (b *Backend) OutputDir(id job.AttemptID) string {
	return filepath.Join(AttemptDir(b.cfg.Home, id), outputsDir)
}

// HostOutputDir implements backend.HostOutputs: local attempts write
// their outputs on this machine.
func (b *Backend) HostOutputDir(id job.AttemptID) string { return b.OutputDir(id) }

// Supervisor returns the running supervisor's identity, starting one if needed.
func (b *Backend) Supervisor(ctx context.Context) (InfoReply, error) {
	c, err := b.connect(ctx)
	if err != nil {
		return InfoReply{}, err
	}
	return c.info, nil
}

// Close drops the connection to the supervisor. The supervisor and its
// attempts keep running.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.client == nil {
		return nil
	}
	err := b.client.Close()
	b.client = nil
	return err
}

// call makes one call of a named method (served.go), connecting (and
// starting the supervisor) first if needed.
func (b *Backend) call(ctx context.Context, method string, args, reply any) error {
	return b.retry(ctx, func(c *supConn) error { return c.call(ctx, method, args, reply) })
}

// retry runs f on the connection to the supervisor, and once more on a
// new one if the first closed under it: what f sends is keyed by the
// attempt, so a second sending changes nothing the first did.
func (b *Backend) retry(ctx context.Context, f func(*supConn) error) error {
	for try := 0; ; try++ {
		c, err := b.connect(ctx)
		if err != nil {
			return err
		}
		err = f(c)
		if !errors.Is(err, errConnLost) || try > 0 {
			return err
		}
		b.drop(c)
	}
}

func (b *Backend) drop(c *supConn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.client == c {
		b.client.Close()
		b.client = nil
	}
}

func (b *Backend) connect(ctx context.Context) (*supConn, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.client != nil {
		select {
		case <-b.client.dead:
		default:
			return b.client, nil
		}
	}
	c, err := dial(ctx, b.cfg)
	if err != nil {
		return nil, err
	}
	b.client = c
	return c, nil
}

// dial connects to the supervisor of cfg.Home, starting one if none
// answers: the new supervisor writes a byte on a pipe once it listens.
func dial(ctx context.Context, cfg Config) (*supConn, error) {
	sock := SocketPath(cfg.Home)
	if conn, err := net.Dial("unix", sock); err == nil {
		return handshake(ctx, conn, cfg.Home)
	}
	ready, err := spawn(cfg)
	if err != nil {
		return nil, err
	}
	defer ready.Close()
	deadline := time.Now().Add(cfg.StartTimeout)
	_ = ready.SetReadDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = ready.SetReadDeadline(time.Now()) })
	defer stop()
	if n, err := ready.Read(make([]byte, 1)); n == 0 && errors.Is(err, io.EOF) && SupervisorPID(cfg.Home) == 0 {
		// It exited without a word, and nobody else took the home.
		return nil, fmt.Errorf("the supervisor exited before it listened on %s (see %s)", sock, filepath.Join(cfg.Home, "supervisor.log"))
	}
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		conn, err := net.Dial("unix", sock)
		if err == nil {
			return handshake(ctx, conn, cfg.Home)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("supervisor did not answer on %s within %s (see %s): %w",
				sock, cfg.StartTimeout, filepath.Join(cfg.Home, "supervisor.log"), err)
		}
		// Another supervisor that took the home is still starting: rare,
		// and bounded by the deadline.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// spawn starts a supervisor in its own session, so that neither a signal
// to the engine's terminal nor the engine's death reaches it. It returns
// the pipe the supervisor writes a byte on once it listens.
func spawn(cfg Config) (*os.File, error) {
	if len(cfg.SupervisorCommand) == 0 {
		return nil, errors.New("no supervisor command configured")
	}
	if err := os.MkdirAll(cfg.Home, 0o755); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(filepath.Join(cfg.Home, "supervisor.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	cmd := exec.Command(cfg.SupervisorCommand[0], cfg.SupervisorCommand[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{w} // descriptor 3
	cmd.Env = append(os.Environ(), readyEnv+"=3")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		return nil, fmt.Errorf("starting supervisor: %w", err)
	}
	go func() { _ = cmd.Wait() }() // reap it if it exits while we live
	return r, nil
}
