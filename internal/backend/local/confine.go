package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// workDir is the directory, inside an isolated attempt's directory, that
// its processes start in and may write: the attempt's directory itself
// holds the records kiln writes, which no task may touch.
const workDir = "work"

// confinement is how one attempt's processes start, as its sandbox says.
type confinement struct {
	mode string
	cred *syscall.Credential
	// work is where the processes start, unless the task names a working
	// directory, and their HOME.
	work string
	// home, run and attempt are the directories the Landlock helper is
	// given: everything outside home, the run's directory to read, the
	// attempt's work and outputs to write.
	home, run, attempt string
}

// confine prepares attempt dir for sb and says how to start its processes;
// nil, nil when the attempt is not isolated.
func (s *Supervisor) confine(dir string, sb *Sandbox) (*confinement, error) {
	if sb == nil {
		return nil, nil
	}
	c := &confinement{mode: sb.Mode, work: filepath.Join(dir, workDir), home: s.home, attempt: dir, run: filepath.Dir(filepath.Dir(dir))}
	for _, d := range []string{c.work, c.tmp()} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	switch sb.Mode {
	case IsolateLandlock:
		return c, nil
	case IsolateUsers:
		return c, s.confineToAccount(c, sb)
	}
	return nil, fmt.Errorf("unknown isolation %q", sb.Mode)
}

// confineToAccount makes the attempt's work and outputs directories the
// project account's alone and lets the account reach them through
// KILN_HOME without reading anything else there.
func (s *Supervisor) confineToAccount(c *confinement, sb *Sandbox) error {
	acc := sb.Account
	if acc == nil {
		a, err := s.accounts.of(sb.Project, sb.FirstUID)
		if err != nil {
			return err
		}
		acc = &a
	}
	if acc.UID == 0 || acc.GID == 0 {
		return fmt.Errorf("project %s's tasks would run as root (uid %d, gid %d)", sb.Project, acc.UID, acc.GID)
	}
	// Traverse only: the account can reach a path it is given, list
	// nothing. The run's directories below are made so (makeAttemptDir).
	if !s.opened.Load() {
		if err := traversable(s.home, filepath.Join(s.home, "runs")); err != nil {
			return err
		}
		s.opened.Store(true)
	}
	for _, p := range []string{c.work, c.tmp(), filepath.Join(c.attempt, outputsDir)} {
		if err := os.Chmod(p, 0o700); err != nil {
			return err
		}
		if err := os.Chown(p, acc.UID, acc.GID); err != nil {
			return err
		}
	}
	c.cred = &syscall.Credential{Uid: uint32(acc.UID), Gid: uint32(acc.GID), Groups: []uint32{}} //nolint:gosec // checked positive by flag parsing
	return nil
}

// tmp is the attempt's own temporary directory, its TMPDIR: a confined
// task may not create files where KILN_HOME's parents are (/tmp, when
// the home is there), and need not share a temporary directory with other
// projects' tasks.
func (c *confinement) tmp() string { return filepath.Join(c.work, "tmp") }

// traversable makes dirs 0711: others may pass through, not list them.
func traversable(dirs ...string) error {
	for _, d := range dirs {
		if err := os.Chmod(d, 0o711); err != nil {
			return err
		}
	}
	return nil
}

// uid is the account the processes run as, or -1 for the supervisor's.
func (c *confinement) uid() int {
	if c == nil || c.cred == nil {
		return -1
	}
	return int(c.cred.Uid)
}

// apply sets up cmd, which starts the program at path, to run confined.
func (c *confinement) apply(cmd *exec.Cmd, path string) {
	if c == nil {
		return
	}
	if cmd.Dir == "" {
		cmd.Dir = c.work
	}
	for name, dir := range map[string]string{"HOME": c.work, "TMPDIR": c.tmp()} {
		if !slices.ContainsFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") }) {
			cmd.Env = append(cmd.Env, name+"="+dir)
		}
	}
	if c.cred != nil {
		cmd.SysProcAttr.Credential = c.cred
	}
	if c.mode == IsolateLandlock {
		cmd.Args = append([]string{sandboxArg0, c.home, c.run, c.attempt, "--", path}, cmd.Args...)
		cmd.Path = "/proc/self/exe"
	}
}

// explain adds to a start that failed for want of permission who the
// process was to run as: a program under /root, say, is out of reach of a
// project's account.
func (c *confinement) explain(err error) error {
	if err == nil || c == nil || c.cred == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	return fmt.Errorf("%w (the task runs as uid %d, its project's account, which may not reach it: "+
		"install programs where every user may run them, or give the task a PATH that finds them)", err, c.cred.Uid)
}
