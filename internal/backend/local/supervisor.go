package local

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// maxExits is how many recent exits the supervisor remembers for watchers.
const maxExits = 1 << 16

// Supervisor forks attempts, waits on them and records how they ended. One
// runs per $KILN_HOME, outliving the engines that use it, so attempts go on
// when an engine dies and their exit status is on disk when it returns.
type Supervisor struct {
	home     string
	instance string

	mu       sync.Mutex
	procs    map[string]*proc
	exits    []Exit // recent exits; exits[i] has sequence base+i+1
	base     uint64
	changed  chan struct{} // closed and replaced on every exit
	lastBusy time.Time
}

type proc struct {
	cmd      *exec.Cmd // nil while starting
	stopping bool
	grace    time.Duration
}

// NewSupervisor returns a supervisor for home.
func NewSupervisor(home string) *Supervisor {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return &Supervisor{
		home: home, instance: hex.EncodeToString(b), procs: map[string]*proc{},
		changed: make(chan struct{}), lastBusy: time.Now(),
	}
}

// Start starts an attempt's process in its own process group, unless the
// attempt was started before (by this supervisor or an earlier one). The
// lock is not held while the process is forked, so starts run in parallel.
func (s *Supervisor) Start(a StartArgs, _ *Empty) error {
	if err := checkID(a.ID); err != nil {
		return err
	}
	dir := AttemptDir(s.home, a.ID)
	s.mu.Lock()
	if _, known := s.procs[a.ID]; known || exists(filepath.Join(dir, "launch.json")) || exists(filepath.Join(dir, "status.json")) {
		s.mu.Unlock()
		return nil
	}
	p := &proc{} // reserves the ID; cmd is set once started
	s.procs[a.ID] = p
	s.mu.Unlock()

	cmd, err := s.command(dir, a)
	if err == nil {
		err = cmd.Start()
	}
	closeFiles(cmd)
	now := time.Now().UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		delete(s.procs, a.ID)
		_ = os.MkdirAll(dir, 0o755) // the failure may have come before the directory
		var nf *notFoundError
		notFound := errors.As(err, &nf)
		s.recordExit(a.ID, statusRecord{ExitCode: -1, StartError: err.Error(), NotFound: notFound, StartedAt: now, FinishedAt: now})
		return nil
	}
	rec := launchRecord{PID: cmd.Process.Pid, StartTicks: startTicks(cmd.Process.Pid), Supervisor: s.instance, StartedAt: now}
	if err := writeJSON(filepath.Join(dir, "launch.json"), rec); err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		delete(s.procs, a.ID)
		return fmt.Errorf("recording launch of %s: %w", a.ID, err)
	}
	p.cmd = cmd
	if p.stopping { // an Abort arrived while it was starting
		s.terminate(a.ID, p, p.grace)
	}
	go s.wait(a.ID, p, now)
	return nil
}

type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }

func (s *Supervisor) command(dir string, a StartArgs) (*exec.Cmd, error) {
	if len(a.Command) == 0 {
		return nil, errors.New("empty command")
	}
	if err := os.MkdirAll(filepath.Join(dir, "outputs"), 0o755); err != nil {
		return nil, err
	}
	path, err := lookPath(a.Command[0], a.Env)
	if err != nil {
		return nil, err
	}
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		return nil, err
	}
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		stdout.Close()
		return nil, err
	}
	wd := a.WorkingDir
	if wd == "" {
		wd = dir
	}
	env := append(append([]string(nil), a.Env...), "KILN_OUTPUTS="+filepath.Join(dir, "outputs"))
	return &exec.Cmd{
		Path: path, Args: a.Command, Env: env, Dir: wd, Stdout: stdout, Stderr: stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}, nil
}

func closeFiles(cmd *exec.Cmd) {
	if cmd == nil {
		return
	}
	for _, w := range []any{cmd.Stdout, cmd.Stderr} {
		if f, ok := w.(*os.File); ok {
			f.Close()
		}
	}
}

// lookPath finds name the way a shell would with the PATH in env.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		if err := executable(name); err != nil {
			return "", err
		}
		return name, nil
	}
	pathEnv := os.Getenv("PATH")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", &notFoundError{fmt.Sprintf("command %q not found in PATH", name)}
}

func executable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case os.IsNotExist(err):
		return &notFoundError{fmt.Sprintf("command %q does not exist", p)}
	case err != nil:
		return err
	case fi.IsDir() || fi.Mode()&0o111 == 0:
		return fmt.Errorf("command %q is not an executable file", p)
	}
	return nil
}

// wait waits for the process, stops whatever it left in its group and
// records how it ended.
func (s *Supervisor) wait(id string, p *proc, started time.Time) {
	err := p.cmd.Wait()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	rec := statusRecord{ExitCode: p.cmd.ProcessState.ExitCode(), StartedAt: started, FinishedAt: time.Now().UTC()}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		rec.Signal = ws.Signal().String()
	}
	if err != nil && rec.ExitCode == 0 {
		rec.ExitCode, rec.StartError = -1, err.Error()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.procs, id)
	s.recordExit(id, rec)
}

// recordExit writes the status file and tells watchers. s.mu must be held.
func (s *Supervisor) recordExit(id string, rec statusRecord) {
	if err := writeJSON(filepath.Join(AttemptDir(s.home, id), "status.json"), rec); err != nil {
		fmt.Fprintf(os.Stderr, "kiln supervisor: recording exit of %s: %v\n", id, err)
	}
	s.exits = append(s.exits, Exit{ID: id, Status: rec})
	if len(s.exits) > maxExits {
		drop := len(s.exits) - maxExits
		s.exits = append([]Exit(nil), s.exits[drop:]...)
		s.base += uint64(drop)
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.lastBusy = time.Now()
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
