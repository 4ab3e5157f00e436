package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// sandboxArg0 is the name the supervisor gives its own binary when it
// starts it to confine a task: RunSandboxIfAsked, first thing in main,
// sees it, confines the process and executes the task in its place.
const sandboxArg0 = "kiln-task-sandbox"

// RunSandboxIfAsked confines this process with Landlock, or puts it into
// its memory cgroup, and executes the task it was started for, if it was
// started as such a step; it returns at once otherwise. Programs that may serve as the supervisor
// (kiln's main, tests standing in for it) call it before anything else.
func RunSandboxIfAsked() {
	if len(os.Args) == 0 {
		return
	}
	switch os.Args[0] {
	case sandboxArg0:
		err := enterSandbox(os.Args[1:])
		fmt.Fprintf(os.Stderr, "kiln: the task cannot start in its sandbox: %v\n", err)
	case joinCgroupArg0:
		err := joinCgroup(os.Args[1:])
		fmt.Fprintf(os.Stderr, "kiln: the task cannot start in its memory cgroup: %v\n", err)
	default:
		return
	}
	os.Exit(127)
}

// enterSandbox takes HOME RUN ATTEMPT -- PATH ARGV..., restricts this
// process to everything outside HOME, RUN read-only and ATTEMPT's work and
// outputs directories read-write, scopes its signals to the processes it
// starts itself, and executes PATH. It returns only on failure.
func enterSandbox(args []string) error {
	if len(args) < 6 || args[3] != "--" {
		return errors.New("want HOME RUN ATTEMPT -- PATH ARGV")
	}
	home, run, attempt, path, argv := args[0], args[1], args[2], args[4], args[5:]
	rules, err := outside(home)
	if err != nil {
		return err
	}
	rules = append(rules,
		landlock.RODirs(run),
		landlock.RWDirs(filepath.Join(attempt, workDir), filepath.Join(attempt, outputsDir)),
	)
	if err := taskDomain().Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return syscall.Exec(path, argv, os.Environ())
}

// taskDomain is what a task's Landlock domain restricts: the file access
// of ABI 5 and, from ABI 6 (Linux 6.12), signals to any process outside
// the domain, so a task can signal neither kiln nor another task, only
// the processes it started. Abstract Unix sockets stay open: ranks of
// one gang, each in a domain of its own, talk through them (NCCL).
// ChooseIsolation refuses the mode, or says what is missing, on a kernel
// without signal scoping.
func taskDomain() landlock.Config {
	return landlock.MustConfig(landlock.V5.HandledAccessFS, landlock.ScopedSet(llsys.ScopeSignal)).BestEffort()
}

// outside grants full access to every file system hierarchy except the
// one at home: Landlock only adds access, so the access kept is each
// sibling of every directory on the way from / to home.
func outside(home string) ([]landlock.Rule, error) {
	home = filepath.Clean(home)
	var rules []landlock.Rule
	for dir := home; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		parent := filepath.Dir(dir)
		entries, err := os.ReadDir(parent)
		if errors.Is(err, fs.ErrPermission) {
			continue // not listable: kiln cannot name its entries, so neither can a rule
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			p := filepath.Join(parent, e.Name())
			if p == dir {
				continue
			}
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				rules = append(rules, landlock.RWDirs(p).WithIoctlDev().WithRefer().IgnoreIfMissing())
			} else if err == nil {
				rules = append(rules, landlock.RWFiles(p).WithIoctlDev().IgnoreIfMissing())
			}
		}
	}
	return rules, nil
}
