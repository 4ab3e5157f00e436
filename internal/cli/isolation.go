package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/backend/local"
)

// taskFlags say how a served engine's tasks are kept apart.
type taskFlags struct {
	isolation string
	env       []string
	accounts  []string
	firstUID  int
}

func (f *taskFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.isolation, "isolation", local.IsolateAuto,
		"how local tasks are kept from kiln and from other projects: auto (users as root, else landlock, else none), users, landlock or none")
	cmd.Flags().StringArrayVar(&f.env, "task-env", nil,
		"NAME of a variable of this environment that tasks get too (repeatable); tasks otherwise get PATH, LANG, LC_ALL and TZ only")
	cmd.Flags().StringArrayVar(&f.accounts, "task-account", nil,
		"PROJECT=UID[:GID]: the account a project's tasks run as with --isolation users (repeatable); other projects get one numbered from --first-uid")
	cmd.Flags().IntVar(&f.firstUID, "first-uid", local.DefaultFirstUID, "first user and group ID kiln numbers for projects' tasks with --isolation users")
}

// apply sets cfg's isolation and task environment, and returns the line
// kiln serve prints about them.
func (f *taskFlags) apply(cfg *app.Config) (string, error) {
	if cfg.Backend != "" && cfg.Backend != local.Name {
		// A cluster's own accounts and containers keep its tasks apart.
		cfg.Isolation = local.Isolation{Mode: local.IsolateNone}
		cfg.TaskEnv = app.BaseEnv(f.env)
		return fmt.Sprintf("task isolation: tasks run as the %s backend runs them; --isolation applies to local processes only", cfg.Backend), nil
	}
	mode, why, err := local.ChooseIsolation(f.isolation)
	if err != nil {
		return "", err
	}
	if f.firstUID < 1000 || f.firstUID > 1<<31-1<<20 {
		return "", &apiv1.Error{Code: apiv1.CodeUsage, Field: "--first-uid", Message: fmt.Sprintf("--first-uid %d is outside 1000..%d", f.firstUID, 1<<31-1<<20)}
	}
	cfg.Isolation = local.Isolation{Mode: mode, FirstUID: f.firstUID, Accounts: map[string]local.Account{}}
	for _, a := range f.accounts {
		project, acc, err := parseAccount(a)
		if err != nil {
			return "", err
		}
		cfg.Isolation.Accounts[project] = acc
	}
	if len(f.accounts) > 0 && mode != local.IsolateUsers {
		return "", &apiv1.Error{Code: apiv1.CodeUsage, Field: "--task-account", Message: "--task-account needs --isolation users (kiln running as root)"}
	}
	unset, err := checkTaskEnv(f.env)
	if err != nil {
		return "", err
	}
	cfg.TaskEnv = app.BaseEnv(f.env)
	line := fmt.Sprintf("task isolation: %s (%s): %s", mode, why, local.Describe(mode))
	if len(unset) > 0 {
		line += fmt.Sprintf("\n--task-env names what is not set here, so tasks get nothing of it: %s", strings.Join(unset, ", "))
	}
	if mode == local.IsolateUsers {
		line += reachablePath(cfg.TaskEnv)
	}
	return line, nil
}

// reachablePath drops from env's PATH the directories project accounts
// cannot search, and says which it dropped.
func reachablePath(env []string) string {
	for i, kv := range env {
		list, ok := strings.CutPrefix(kv, "PATH=")
		if !ok {
			continue
		}
		kept, dropped := local.ReachablePath(list)
		if len(dropped) == 0 {
			return ""
		}
		env[i] = "PATH=" + strings.Join(kept, string(filepath.ListSeparator))
		return fmt.Sprintf("\ntasks' PATH leaves out what project accounts cannot reach: %s", strings.Join(dropped, ", "))
	}
	return ""
}

// parseAccount reads PROJECT=UID[:GID]; GID defaults to UID.
func parseAccount(s string) (string, local.Account, error) {
	bad := func(why string) error {
		return &apiv1.Error{Code: apiv1.CodeUsage, Field: "--task-account", Message: fmt.Sprintf("--task-account %q: %s; want PROJECT=UID[:GID]", s, why)}
	}
	project, ids, ok := strings.Cut(s, "=")
	if !ok || project == "" {
		return "", local.Account{}, bad("no project")
	}
	uidText, gidText, hasGID := strings.Cut(ids, ":")
	if !hasGID {
		gidText = uidText
	}
	uid, err1 := strconv.ParseUint(uidText, 10, 31)
	gid, err2 := strconv.ParseUint(gidText, 10, 31)
	switch {
	case err1 != nil || err2 != nil:
		return "", local.Account{}, bad("user and group IDs are numbers from 1 to 2147483647")
	case uid == 0 || gid == 0:
		return "", local.Account{}, bad("tasks never run as root")
	}
	return project, local.Account{UID: int(uid), GID: int(gid)}, nil
}

// envName is what a variable's name may be.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkTaskEnv refuses --task-env names that are not names, that kiln
// reserves for tasks (KILN_*), or that hold the store's password; it
// returns those not set in this environment.
func checkTaskEnv(names []string) (unset []string, err error) {
	for _, name := range names {
		bad := func(why string) error {
			return &apiv1.Error{Code: apiv1.CodeUsage, Field: "--task-env", Message: fmt.Sprintf("--task-env %q: %s", name, why)}
		}
		switch {
		case !envName.MatchString(name):
			return nil, bad("not a variable name (letters, digits and _, not starting with a digit)")
		case strings.HasPrefix(name, "KILN_"):
			return nil, bad("names starting with KILN_ are kiln's: it sets those tasks get itself")
		case name == "PGPASSWORD":
			return nil, bad("the store's password never reaches a task; give a task a secret with valueFrom: {secret: NAME}")
		}
		if _, ok := os.LookupEnv(name); !ok {
			unset = append(unset, name)
		}
	}
	return unset, nil
}
