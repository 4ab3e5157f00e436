// Package slurm runs attempts on a Slurm cluster (docs/design/0025-slurm.md).
// An attempt is one batch job of as many nodes as its spec has hosts; the
// job's script starts each process with srun on its node, applies the gang
// rule and records how each process ended in the attempt's directory on
// the filesystem the cluster shares with kiln (Config.Dir). The backend
// drives Slurm through its commands (sbatch, squeue, sacct, scancel,
// scontrol) and keeps no state of its own: a restarted backend finds its
// jobs again by their names.
package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// Config is how the backend reaches the cluster and what it asks of it.
type Config struct {
	// Dir is a directory on the filesystem the cluster's nodes share with
	// this machine, at the same path on both; attempts' scripts, logs and
	// outputs live under Dir/runs/<run>/<node>/<number>. Required.
	Dir string
	// Conf is the slurm.conf the commands read (SLURM_CONF); empty: the
	// commands' own default or the environment's SLURM_CONF.
	Conf string
	// Bin is the directory of the Slurm commands; empty: they are looked
	// up in PATH.
	Bin string
	// Partition, Account and QOS are passed to sbatch when set.
	Partition, Account, QOS string
	// Prefix starts the name of every job the backend submits, and tells
	// its jobs apart from others of the same user (default "kiln"). Two
	// kiln servers on one cluster and user need distinct prefixes.
	Prefix string
	// Poll is how often Watch asks squeue about the jobs (default 1s).
	Poll time.Duration
	// SbatchArgs are further arguments every sbatch gets
	// ("--constraint=a100").
	SbatchArgs []string
}

// Backend runs attempts as Slurm jobs. It is safe for concurrent use.
type Backend struct {
	cfg    Config
	mu     sync.Mutex
	timers map[job.AttemptID]*time.Timer // forced kills due after an abort's grace
	// launching holds, for each attempt a Launch is submitting, a channel
	// closed when it is done.
	launching map[job.AttemptID]chan struct{}
	closed    chan struct{}
	closing   sync.Once
}

var (
	_ backend.Backend     = (*Backend)(nil)
	_ backend.Notifier    = (*Backend)(nil)
	_ backend.Logger      = (*Backend)(nil)
	_ backend.Networker   = (*Backend)(nil)
	_ backend.Releaser    = (*Backend)(nil)
	_ backend.RunRemover  = (*Backend)(nil)
	_ backend.FileReader  = (*Backend)(nil)
	_ backend.HostOutputs = (*Backend)(nil)
)

// New checks cfg (its directory exists, the Slurm commands run and reach
// the controller) and returns a backend on it.
func New(ctx context.Context, cfg Config) (*Backend, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = "kiln"
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Dir == "" || !filepath.IsAbs(cfg.Dir) {
		return nil, configError("slurm.dir must be an absolute path on the filesystem the cluster's nodes share with kiln, got %q", cfg.Dir)
	}
	if fi, err := os.Stat(cfg.Dir); err != nil || !fi.IsDir() {
		return nil, configError("slurm.dir %s is not a directory here: %v", cfg.Dir, err)
	}
	if strings.ContainsAny(cfg.Prefix, ". /\n") {
		return nil, configError("slurm.prefix %q may not hold '.', '/' or blanks", cfg.Prefix)
	}
	if err := checkConf(cfg.Conf); err != nil {
		return nil, err
	}
	b := &Backend{cfg: cfg, timers: map[job.AttemptID]*time.Timer{}, launching: map[job.AttemptID]chan struct{}{}, closed: make(chan struct{})}
	if _, err := b.command(ctx, "squeue", "-h", "-j", "0"); err != nil && !isInvalidJob(err) {
		return nil, configError("the Slurm controller cannot be reached with squeue: %v", err)
	}
	return b, nil
}

// checkConf fails at once on a slurm.conf that is named (by slurm.conf
// or SLURM_CONF) but missing: the commands would retry reading it for a
// minute before saying so.
func checkConf(conf string) error {
	field := "slurm.conf"
	if conf == "" {
		conf, field = os.Getenv("SLURM_CONF"), "SLURM_CONF"
	}
	if conf == "" {
		return nil // the commands' default, or a configless cluster's DNS record
	}
	if _, err := os.Stat(conf); err != nil {
		return configError("%s names %s, which cannot be read: %v", field, conf, err)
	}
	return nil
}

// configError is an error of the backend's configuration.
func configError(format string, args ...any) error {
	return &apiv1.Error{Code: apiv1.CodeSlurmConfig, Message: fmt.Sprintf(format, args...)}
}

// Close stops the forced kills this backend still owes; the jobs
// themselves run on.
func (b *Backend) Close() error {
	b.closing.Do(func() {
		close(b.closed)
		b.mu.Lock()
		defer b.mu.Unlock()
		for id, t := range b.timers {
			t.Stop()
			delete(b.timers, id)
		}
	})
	return nil
}

// outputsDir is $KILN_OUTPUTS relative to the attempt's directory.
const outputsDir = "outputs"

// attemptDir is where attempt id's files live, as this machine and the
// cluster's nodes see them.
func (b *Backend) attemptDir(id job.AttemptID) string {
	return filepath.Join(b.cfg.Dir, "runs", id.Run, id.Node, fmt.Sprint(id.Number))
}

// runDir is where a run's attempts live.
func (b *Backend) runDir(run string) string { return filepath.Join(b.cfg.Dir, "runs", run) }

// OutputDir implements backend.Backend.
func (b *Backend) OutputDir(id job.AttemptID) string {
	return filepath.Join(b.attemptDir(id), outputsDir)
}

// HostOutputDir implements backend.HostOutputs: Config.Dir is the same
// path here and on the nodes.
func (b *Backend) HostOutputDir(id job.AttemptID) string { return b.OutputDir(id) }

// jobName is the Slurm job name of attempt id: the prefix, then the
// attempt's ID with '/' as '.'. The job's comment holds the ID itself.
func (b *Backend) jobName(id job.AttemptID) string {
	return b.cfg.Prefix + "." + id.Run + "." + id.Node + "." + fmt.Sprint(id.Number)
}

// checkID refuses an attempt ID that cannot name a directory.
func checkID(id job.AttemptID) error {
	for _, s := range []string{id.Run, id.Node} {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\x00\n|") {
			return fmt.Errorf("attempt ID %q cannot name a Slurm job", id)
		}
	}
	return nil
}

// validID reports whether id can name a job and a directory.
func validID(id job.AttemptID) bool { return checkID(id) == nil }

// command runs a Slurm command and returns its standard output.
func (b *Backend) command(ctx context.Context, name string, args ...string) (string, error) {
	path := name
	if b.cfg.Bin != "" {
		path = filepath.Join(b.cfg.Bin, name)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	if b.cfg.Conf != "" {
		cmd.Env = append(os.Environ(), "SLURM_CONF="+b.cfg.Conf)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), &commandError{cmd: name, err: err, stderr: strings.TrimSpace(stderr.String())}
	}
	return string(out), nil
}

// commandError is a Slurm command that failed, with what it said.
type commandError struct {
	cmd, stderr string
	err         error
}

func (e *commandError) Error() string {
	if strings.HasPrefix(e.stderr, e.cmd+": ") {
		return e.stderr
	}
	if e.stderr != "" {
		return e.cmd + ": " + e.stderr
	}
	return e.cmd + ": " + e.err.Error()
}

func (e *commandError) Unwrap() error { return e.err }

// isInvalidJob reports whether err is squeue's answer about a job ID it
// does not know, which still shows the controller answered.
func isInvalidJob(err error) bool {
	var ce *commandError
	return errors.As(err, &ce) && strings.Contains(ce.stderr, "Invalid job id")
}
