// Package cli is kiln's command line: thin cobra commands over the app.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/local"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailed  = 1 // a run did not succeed, or a command failed
	exitUsage   = 2 // bad flags or arguments
	exitAborted = 130
)

// exitError carries an exit code out of a command; its message, if any,
// has been printed already.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// env is what every command shares.
type env struct {
	home    string
	server  string // a kiln server's URL; empty: the embedded engine
	backend backendFlags
	// readsBackend is set by commands that read what the backend keeps
	// (logs): they open the configured backend, not just the store.
	readsBackend bool
	// exits is set when the process ends as soon as the command does
	// (Exit): the store is then left for the exit to close.
	exits bool
	// ctx picks a context of the configuration file, and the token;
	// resolveContext settles server, token and contextProject from it.
	ctx            contextFlags
	serverFlag     *pflag.Flag
	tokenFlag      *pflag.Flag
	contextProject string
	stdin          io.Reader
	stdout         io.Writer
	stderr         io.Writer
	// stopProfiles ends and writes the profiles --cpuprofile and
	// KILN_MEMPROFILE asked for; run calls it however the command ends.
	stopProfiles func()
}

// Main runs kiln with args and returns its exit code. No panic escapes.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(&env{stdin: stdin, stdout: stdout, stderr: stderr}, args)
}

// Exit runs kiln with the process's arguments and standard files, as
// Main, and ends the process with its exit code. Knowing that nothing
// follows, a command leaves its store to the exit to close (see
// app.Config.Exiting), which Main, whose caller goes on, must not.
func Exit() {
	os.Exit(run(&env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, exits: true}, os.Args[1:]))
}

// run runs kiln with args in e and returns its exit code.
func run(e *env, args []string) (code int) {
	stdin, stdout, stderr := e.stdin, e.stdout, e.stderr
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "kiln: internal error: %v\nplease report this with the command you ran\n", r)
			code = exitFailed
		}
	}()
	root := newRoot(e)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if e.stopProfiles != nil {
		e.stopProfiles()
	}
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	}
	if apiv1.CodeOf(err) == "" && isCobraUsage(err) {
		err = commandError(root, err)
	}
	printError(stderr, err)
	if usageCodes[apiv1.CodeOf(err)] {
		return exitUsage // the command line asked for what cannot be: kubectl's 2 for usage
	}
	return exitFailed
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "kiln",
		Short: "Run machine-learning pipelines and distributed training jobs",
		Long: "Run machine-learning pipelines and distributed training jobs.\n\n" +
			"The flags that choose the backend (--backend, --kubeconfig, --namespace and the other Kubernetes ones)\n" +
			"are listed by the commands that start an engine: kiln run --help, kiln serve --help.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(flagError)
	root.DisableSuggestions = true // commandError suggests, on one line
	root.PersistentFlags().StringVar(&e.home, "home", defaultHome(), "kiln home: store, logs and outputs (env KILN_HOME)")
	root.PersistentFlags().StringVar(&e.server, "server", "",
		"a kiln server's URL: talk to it instead of the embedded engine (env KILN_SERVER; token in --token or KILN_TOKEN; or a context's)")
	e.serverFlag = root.PersistentFlags().Lookup("server")
	e.ctx.add(root.PersistentFlags())
	e.tokenFlag = root.PersistentFlags().Lookup("token")
	e.backend.add(root.PersistentFlags())
	var profile string
	root.PersistentFlags().StringVar(&profile, "cpuprofile", "", "write a CPU profile to this file")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) (err error) {
		if err := checkOutput(cmd); err != nil {
			return err
		}
		if e.stopProfiles, err = startProfiles(profile, cmd.Name()); err != nil {
			return err
		}
		if ownsHome(cmd) {
			return nil
		}
		if err := e.resolveContext(); err != nil {
			return err
		}
		e.applyContextProject(cmd)
		return nil
	}
	root.AddCommand(newRunCmd(e), newResumeCmd(e), newGetCmd(e), newDescribeCmd(e), newLogsCmd(e),
		newCancelCmd(e), newStopCmd(e), newSuspendCmd(e, true), newSuspendCmd(e, false), newValidateCmd(e), newSuperviseCmd(e),
		newServeCmd(e), newTokenCmd(e), newSecretCmd(e), newRetryCmd(e), newApplyCmd(e), newDeleteCmd(e),
		newApproveCmd(e, true), newApproveCmd(e, false), newSignalCmd(e), newCacheCmd(e), newGCCmd(e), newInitializeCmd(e))
	root.AddCommand(newArtifactsCmd(e), newArtifactExecCmd())
	root.AddCommand(newRerunCmd(e))
	root.AddCommand(newConvertCmd(e))
	root.AddCommand(newPartyCmd(e), newMessagesCmd(e))
	root.AddCommand(newVersionCmd(e), newSubmitCmd(e), newWaitCmd(e), newWatchCmd(e))
	root.AddCommand(newConfigCmd(e))
	root.AddCommand(newWhoamiCmd(e))
	wireHelp(root)
	wireCompletion(root, e)
	wireFlagCompletion(root, e)
	return root
}

// ownsHome reports whether cmd works on its home whatever the contexts
// say: a server and the supervisor have no server to talk to, and kiln
// config reads the file itself.
func ownsHome(cmd *cobra.Command) bool {
	switch {
	case cmd.Name() == "serve", cmd.Name() == "supervise":
		return true
	case cmd.HasParent() && cmd.Parent().Name() == "config":
		return true
	}
	return false
}

// RootHome is the home kiln takes as root when neither KILN_HOME nor an
// existing ~/.kiln names one and root's own home is closed to other
// users, as /root is: the accounts tasks run as under isolation users
// could not reach their attempts there.
const RootHome = "/var/lib/kiln"

// defaultHome is KILN_HOME, else ~/.kiln, else, as root, RootHome when
// ~/.kiln does not exist and other users cannot reach it.
func defaultHome() string {
	home, _ := chosenHome()
	return home
}

// chosenHome is defaultHome and, when it is RootHome, why.
func chosenHome() (home, why string) {
	if h := os.Getenv("KILN_HOME"); h != "" {
		return h, ""
	}
	dir, err := os.UserHomeDir()
	if err != nil {
		return ".kiln", ""
	}
	home = filepath.Join(dir, ".kiln")
	if os.Geteuid() != 0 {
		return home, ""
	}
	if _, err := os.Lstat(home); err == nil || local.CheckReachable(home, local.IsolateUsers) == nil {
		return home, ""
	}
	return RootHome, fmt.Sprintf("kiln runs as root and %s is closed to the accounts tasks run as; KILN_HOME or --home choose another", dir)
}

// printError prints every coded error on its own line, with the CLI's
// hint where the API's speaks of HTTP (see forCLI).
func printError(w io.Writer, err error) {
	coded := apiv1.Errors(err)
	if len(coded) == 0 {
		fmt.Fprintf(w, "error: %v\n", err)
		return
	}
	for _, e := range coded {
		fmt.Fprintf(w, "error: %v\n", forCLI(e))
	}
}

// isCobraUsage reports whether err is cobra's own complaint about the
// command line (an unknown command), which has no code of its own.
func isCobraUsage(err error) bool {
	return strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown flag")
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
