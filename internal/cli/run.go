package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/workflow"
)

func newRunCmd(e *env) *cobra.Command {
	var pool poolFlags
	var params []string
	var quiet bool
	var project, cacheMode, key string
	var fileFlag filesFlag
	cmd := &cobra.Command{
		Use:   "run FILE... | -f FILE...",
		Short: "Submit a workflow and watch it until it ends",
		Long: "Submit the one runnable resource (Workflow or TrainJob) in FILE... and watch it. Exits 0 only if\n" +
			"the run succeeded. Tasks start in the directory of the workflow's file (the current directory for\n" +
			"a workflow read from standard input, so relative paths in it are resolved from there); a server on another\n" +
			"machine starts them in their attempt's own directory. Ctrl-C cancels the run cleanly; a second\n" +
			"Ctrl-C leaves at once, and kiln resume picks the run up.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := fileFlag.with(args, "kiln run needs the file of a Workflow or TrainJob: kiln run FILE... (- or -f - reads standard input)")
			if err != nil {
				return err
			}
			sub, err := submission(e, files, params, project, cacheMode)
			if err != nil {
				return err
			}
			sub.IdempotencyKey = key
			// A Ctrl-C while the run is submitted cancels it once it exists.
			sig, unhook := interrupts()
			defer unhook()
			eng, done, err := e.open(cmd.Context(), collecting, &pool)
			if err != nil {
				return err
			}
			defer done()
			run, replayed, err := eng.SubmitOnce(cmd.Context(), sub)
			if err != nil {
				return err
			}
			if replayed {
				fmt.Fprintf(e.stderr, "run %s was created by an earlier submission with this idempotency key: nothing new was submitted\n", run.ID)
			}
			return watchRunsOn(e, eng, []apiv1.RunID{run.ID}, quiet, sig)
		},
	}
	pool.add(cmd)
	fileFlag.add(cmd)
	cmd.Flags().StringVar(&project, "project", "", "the project the run belongs to (default \"default\")")
	cmd.Flags().StringArrayVarP(&params, "param", "p", nil, "set a workflow parameter, name=value (repeatable)")
	addKeyFlag(cmd, &key)
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the final summary")
	cmd.Flags().StringVar(&cacheMode, "cache", "on", "how cached tasks use the cache: on, off (neither read nor write) or overwrite (compute afresh and replace)")
	return cmd
}

// parseCacheMode checks a --cache value.
func parseCacheMode(s string) (apiv1.CacheMode, error) {
	for _, m := range apiv1.CacheModes() {
		if string(m) == s {
			return m, nil
		}
	}
	return "", &apiv1.Error{
		Code: apiv1.CodeUsage, Field: "--cache",
		Message: fmt.Sprintf("%q is not a cache mode", s), Hint: "use on, off or overwrite",
	}
}

// submission reads files ("-" is standard input) and the -p, --project
// and --cache flags into a submission from this directory.
func submission(e *env, files, params []string, project, cacheMode string) (apiv1.Submission, error) {
	given, err := parseParams(params)
	if err != nil {
		return apiv1.Submission{}, err
	}
	sub, err := readSubmission(e, files, given, project)
	if err != nil {
		return sub, err
	}
	sub.Cache, err = parseCacheMode(cacheMode)
	return sub, err
}

// readSubmission reads files ("-" is standard input) into a submission
// from this directory.
func readSubmission(e *env, files []string, params map[string]string, project string) (apiv1.Submission, error) {
	sub := apiv1.Submission{Params: params, Project: project}
	if wd, err := os.Getwd(); err == nil {
		sub.WorkDir = wd
	}
	for _, f := range files {
		src, err := workflow.ReadSource(f, e.stdin)
		if err != nil {
			return sub, err
		}
		sub.Files = append(sub.Files, src)
	}
	return sub, nil
}

func parseParams(pairs []string) (map[string]string, error) {
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		name, value, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return nil, usagef("-p %q is not name=value", p)
		}
		out[name] = value
	}
	return out, nil
}

func newResumeCmd(e *env) *cobra.Command {
	var pool poolFlags
	var quiet bool
	cmd := &cobra.Command{
		Use:   "resume [RUN...]",
		Short: "Continue unfinished runs whose engine is gone, and watch them until they end",
		RunE: func(cmd *cobra.Command, args []string) error {
			if e.server != "" {
				return usagef("kiln serve adopts unfinished runs itself; resume is for the embedded engine")
			}
			return withApp(cmd, e, collecting, &pool, func(a *app.App) error {
				ids, err := resumable(cmd.Context(), a, args)
				if err != nil {
					return err
				}
				claimed, err := a.Claim(cmd.Context(), ids...)
				if err != nil {
					return err
				}
				if err := claimedAll(ids, claimed); err != nil {
					if len(claimed) == 0 {
						return err
					}
					printError(e.stderr, err)
				}
				if len(claimed) == 0 {
					fmt.Fprintln(e.stdout, "no unfinished runs without a live engine")
					return nil
				}
				fmt.Fprintf(e.stdout, "resuming %d runs\n", len(claimed))
				return watchRuns(e, a, claimed, quiet)
			})
		},
	}
	pool.add(cmd)
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the final summary")
	return cmd
}

// watchRuns shows the runs until they end, cancelling them on the first
// Ctrl-C and leaving on the second. It returns an exitError unless every
// run succeeded: 130 after a Ctrl-C, whether the runs ended cancelled or
// were left, as kiln wait exits.
func watchRuns(e *env, eng engine, ids []apiv1.RunID, quiet bool) error {
	sig, unhook := interrupts()
	defer unhook()
	return watchRunsOn(e, eng, ids, quiet, sig)
}

// watchRunsOn is watchRuns with the signals caught already (since before
// the runs were submitted).
func watchRunsOn(e *env, eng engine, ids []apiv1.RunID, quiet bool, sig <-chan os.Signal) error {
	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	var interrupted atomic.Bool
	go func() {
		<-sig
		interrupted.Store(true)
		fmt.Fprintln(e.stderr, "cancelling (press Ctrl-C again to leave now; kiln resume then finishes the cancel)")
		for _, id := range ids {
			if err := eng.Cancel(ctx, id); err != nil && ctx.Err() == nil {
				// The cancel is not recorded (a full disk, say): waiting
				// for it to take effect would wait for ever.
				printError(e.stderr, err)
				fmt.Fprintf(e.stderr, "leaving without cancelling %s; kiln resume %s finishes it once the store can be written\n", id, id)
				leave()
				return
			}
		}
		<-sig
		leave()
	}()
	w, stop := newWatcher(e, eng, quiet)
	defer stop()
	ok, err := w.watch(ctx, ids)
	if err != nil {
		return err
	}
	if ctx.Err() != nil || interrupted.Load() {
		return &exitError{exitAborted}
	}
	if !ok {
		return &exitError{exitFailed}
	}
	return nil
}

// interrupts catches Ctrl-C and SIGTERM from now on, for watchRuns, until
// the function it returns is called.
func interrupts() (<-chan os.Signal, func()) {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	return sig, func() { signal.Stop(sig) }
}

// resumable checks that every run named exists and has not ended.
func resumable(ctx context.Context, a *app.App, args []string) ([]apiv1.RunID, error) {
	ids := make([]apiv1.RunID, len(args))
	var errs []error
	for i, arg := range args {
		ids[i] = apiv1.RunID(arg)
		r, err := a.GetRun(ctx, ids[i])
		switch {
		case err != nil:
			errs = append(errs, err)
		case r.Status.Phase.Done():
			errs = append(errs, apiv1.Errorf(apiv1.CodeRunPhase,
				fmt.Sprintf("run %s has ended (%s): there is nothing to resume; kiln retry %s runs again what did not succeed", r.ID, r.Status.Phase, r.ID)))
		}
	}
	return ids, errors.Join(errs...)
}

// claimedAll reports the runs asked for by name that another engine, still
// alive, works.
func claimedAll(asked, claimed []apiv1.RunID) error {
	var errs []error
	for _, id := range asked {
		if !slices.Contains(claimed, id) {
			errs = append(errs, apiv1.Errorf(apiv1.CodeRunPhase,
				fmt.Sprintf("run %s is worked by an engine that is still running; watch it with kiln logs -f %s", id, id)))
		}
	}
	return errors.Join(errs...)
}
