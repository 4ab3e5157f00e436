package local

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// The ways the supervisor can keep tasks apart from kiln and from each
// other (docs/design/0005).
const (
	// IsolateNone runs tasks as kiln's own user, with the environment the
	// engine gives them: right for one person's `kiln run`.
	IsolateNone = "none"
	// IsolateUsers runs each project's tasks as an unprivileged account of
	// its own. It needs kiln to run as root.
	IsolateUsers = "users"
	// IsolateLandlock confines each task's file access with Landlock to
	// its own attempt and run, outside KILN_HOME; for kiln as any user.
	IsolateLandlock = "landlock"
	// IsolateAuto picks users as root, else landlock where the kernel has
	// it, else none.
	IsolateAuto = "auto"
)

// DefaultFirstUID is where the accounts kiln numbers for projects start:
// above the ranges distributions give people, system services and
// container sub-IDs by default.
const DefaultFirstUID = 800000

// Isolation is how the supervisor keeps one engine's tasks apart.
type Isolation struct {
	// Mode is IsolateNone (the zero value), IsolateUsers or IsolateLandlock.
	Mode string
	// Accounts are the accounts named projects' tasks run as, in mode
	// users. A project not named gets one of its own, numbered from
	// FirstUID and kept in KILN_HOME/task-accounts.json.
	Accounts map[string]Account
	// FirstUID is DefaultFirstUID when zero.
	FirstUID int
}

// Account is a numeric user and group. It needs no entry in /etc/passwd.
type Account struct {
	UID int `json:"uid"`
	GID int `json:"gid"`
}

// Sandbox is what the supervisor applies to one attempt: how it is
// isolated and, for mode users, as whom it runs.
type Sandbox struct {
	Mode    string
	Project string
	// Account, when set, is the project's account as configured; else the
	// supervisor numbers one.
	Account  *Account
	FirstUID int
}

// sandbox is the attempt's sandbox under iso, nil when tasks are not
// isolated.
func (iso Isolation) sandbox(project string) *Sandbox {
	if iso.Mode == "" || iso.Mode == IsolateNone {
		return nil
	}
	sb := &Sandbox{Mode: iso.Mode, Project: project, FirstUID: iso.FirstUID}
	if a, ok := iso.Accounts[project]; ok {
		sb.Account = &a
	}
	if sb.FirstUID == 0 {
		sb.FirstUID = DefaultFirstUID
	}
	return sb
}

// ChooseIsolation resolves the mode asked for (auto, users, landlock or
// none) against what this process and kernel offer. A mode that cannot be
// had is a KLN-6010 error; auto falls back and says why.
func ChooseIsolation(asked string) (mode, why string, err error) {
	root, abi := os.Geteuid() == 0, LandlockABI()
	switch asked {
	case "", IsolateAuto:
		switch {
		case root:
			return IsolateUsers, "kiln runs as root", nil
		case abi >= signalScopeABI:
			return IsolateLandlock, fmt.Sprintf("kiln does not run as root; the kernel has Landlock ABI %d", abi), nil
		case abi > 0:
			return IsolateLandlock, fmt.Sprintf("kiln does not run as root; the kernel has Landlock ABI %d, "+
				"WITHOUT SIGNAL SCOPING (ABI %d, Linux 6.12): tasks can signal one another and kiln's processes", abi, signalScopeABI), nil
		}
		return IsolateNone, "kiln does not run as root and the kernel has no Landlock", nil
	case IsolateUsers:
		if !root {
			return "", "", isolationError("users", "running tasks as other users needs kiln to run as root")
		}
		return IsolateUsers, "asked for", nil
	case IsolateLandlock:
		if abi == 0 {
			return "", "", isolationError("landlock", "the kernel has no Landlock (Linux 5.13 or later, with landlock in the lsm= list)")
		}
		if abi < signalScopeABI {
			return "", "", isolationError("landlock", fmt.Sprintf("the kernel's Landlock ABI %d cannot keep a task from signalling "+
				"another project's tasks (that needs ABI %d, Linux 6.12); --isolation auto runs with it and says so", abi, signalScopeABI))
		}
		return IsolateLandlock, fmt.Sprintf("asked for; the kernel has Landlock ABI %d", abi), nil
	case IsolateNone:
		return IsolateNone, "asked for", nil
	}
	return "", "", &apiv1.Error{
		Code: apiv1.CodeUsage, Field: "--isolation",
		Message: fmt.Sprintf("isolation %q is not one of auto, users, landlock, none", asked),
	}
}

func isolationError(mode, why string) error {
	return &apiv1.Error{Code: apiv1.CodeIsolation, Field: "--isolation", Message: fmt.Sprintf("isolation %s cannot be had: %s", mode, why)}
}

// Describe says, for kiln serve's start-up log, what a mode keeps a task
// from doing and what it does not.
func Describe(mode string) string {
	switch mode {
	case IsolateUsers:
		return "each project's tasks run as an unprivileged account of their own (no supplementary groups), " +
			"in an attempt directory they alone can write; KILN_HOME is 0711 and what it holds 0600, so a task " +
			"reads neither the store, the tokens, the secret key nor another project's logs and outputs"
	case IsolateLandlock:
		return asRoot() + "tasks run as kiln's user, confined by Landlock: outside KILN_HOME they keep the access kiln has; " +
			"inside it they read their own run and write only their attempt's work and outputs directories; " +
			"kiln's processes hide their environment and the supervisor refuses confined callers; " + signalScope()
	}
	return "NONE: tasks run as kiln's user and can read and signal everything it can, KILN_HOME included; " +
		"do not serve several projects this way"
}

// signalScopeABI is the first Landlock ABI that scopes signals: a task
// in a domain cannot signal a process outside it.
const signalScopeABI = 6

// asRoot warns, for landlock, that kiln's user is root.
func asRoot() string {
	if os.Geteuid() != 0 {
		return ""
	}
	return "KILN RUNS AS ROOT, SO TASKS RUN AS ROOT: outside KILN_HOME they may read and write all root may " +
		"(use --isolation users, the default as root, to run them as accounts of their own); "
}

// signalScope says whether landlock's tasks can signal other processes.
func signalScope() string {
	if LandlockABI() >= signalScopeABI {
		return "a task can signal only the processes it started, neither kiln's nor another task's"
	}
	return "TASKS CAN SIGNAL ONE ANOTHER AND KILN'S PROCESSES (the kernel's Landlock has no signal scoping)"
}

// LandlockABI is the Landlock ABI version the kernel offers, 0 if none.
func LandlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// CheckReachable reports, for mode users, a directory above home that
// other users cannot search: tasks running as project accounts could not
// reach their attempt through it.
func CheckReachable(home, mode string) error {
	if mode != IsolateUsers {
		return nil
	}
	for dir := filepath.Dir(filepath.Clean(home)); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			return isolationError("users", err.Error())
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return &apiv1.Error{
				Code: apiv1.CodeIsolation, File: dir, Field: "--isolation",
				Message: fmt.Sprintf("isolation users cannot reach tasks' attempts: %s (mode %04o) above KILN_HOME %s is closed to other users", dir, fi.Mode().Perm(), home),
				Hint: "use a home whose parents others may search, such as /var/lib/kiln (the default as root when ~/.kiln does not " +
					"exist: mv ~/.kiln /var/lib/kiln, or set KILN_HOME=/var/lib/kiln), or chmod o+x the directory named",
			}
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}

// ReachablePath splits a PATH list into the directories other users may
// search, from / down, and those they may not: a project's account could
// not run a program found in the second.
func ReachablePath(list string) (kept, dropped []string) {
	for _, dir := range filepath.SplitList(list) {
		if dir != "" && searchableByOthers(dir) {
			kept = append(kept, dir)
		} else {
			dropped = append(dropped, dir)
		}
	}
	return kept, dropped
}

func searchableByOthers(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}
