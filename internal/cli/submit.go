package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// needServer refuses a command that leaves runs to a server's engine
// when there is no server, saying why.
func needServer(e *env, what, why string) error {
	if e.server != "" {
		return nil
	}
	return usagef("kiln %s needs a server (--server or KILN_SERVER): %s", what, why)
}

func newSubmitCmd(e *env) *cobra.Command {
	var params []string
	var project, cacheMode, output, key string
	var fileFlag filesFlag
	cmd := &cobra.Command{
		Use:   "submit FILE... | -f FILE...",
		Short: "Submit a workflow to the server and print the run's ID, without watching it",
		Long: "Submit the one runnable resource (Workflow or TrainJob) in FILE... (- reads standard input) to\n" +
			"the server and print the new run's ID; kiln wait RUN waits for it to end. A server on this machine\n" +
			"starts tasks in the directory of the workflow's file, or in the current directory for standard input,\n" +
			"so that relative paths in a piped workflow are resolved from where kiln submit runs.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := fileFlag.with(args, "kiln submit needs the file of a Workflow or TrainJob: kiln submit FILE... (- or -f - reads standard input)")
			if err != nil {
				return err
			}
			if err := needServer(e, "submit", "an engine embedded in this command would stop when it ends; kiln run runs and watches a workflow on this machine"); err != nil {
				return err
			}
			sub, err := submission(e, files, params, project, cacheMode)
			if err != nil {
				return err
			}
			sub.IdempotencyKey = key
			eng, done, err := e.open(cmd.Context(), reading, nil)
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
			if done, err := printObject(e.stdout, output, run); done {
				return err
			}
			fmt.Fprintln(e.stdout, run.ID)
			return nil
		},
	}
	fileFlag.add(cmd)
	cmd.Flags().StringVar(&project, "project", "", "the project the run belongs to (default \"default\")")
	cmd.Flags().StringArrayVarP(&params, "param", "p", nil, "set a workflow parameter, name=value (repeatable)")
	addKeyFlag(cmd, &key)
	cmd.Flags().StringVar(&cacheMode, "cache", "on", "how cached tasks use the cache: on, off (neither read nor write) or overwrite (compute afresh and replace)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml or jsonpath=TEMPLATE (the run as saved); default its ID alone")
	return cmd
}

func newWaitCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "wait RUN...",
		Short: "Wait for runs to end; exit 0 only if every one succeeded",
		Long: "Wait until every run named has ended and print each one's summary. Exits 0 only if every run\n" +
			"succeeded. Ctrl-C leaves without touching the runs.",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("kiln wait needs the runs to wait for: kiln wait RUN...")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := needServer(e, "wait", "without one no engine works the runs while it waits; kiln run watches runs on this machine, and kiln resume finishes those left"); err != nil {
				return err
			}
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			ids, err := existingRuns(cmd.Context(), eng, args)
			if err != nil {
				return err
			}
			return waitRuns(e, eng, ids, true)
		},
	}
}

// waitRuns waits for ids to end, showing them live unless quiet and
// printing their summaries, and leaves at Ctrl-C without touching them.
func waitRuns(e *env, eng engine, ids []apiv1.RunID, quiet bool) error {
	ctx, leave := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer leave()
	w, stop := newWatcher(e, eng, quiet)
	defer stop()
	ok, err := w.watch(ctx, ids)
	switch {
	case err != nil:
		return err
	case ctx.Err() != nil:
		return &exitError{exitAborted}
	case !ok:
		return &exitError{exitFailed}
	}
	return nil
}

// addKeyFlag adds --idempotency-key, the key a submission to a server
// is sent with (and sent again with, when its answer is lost).
func addKeyFlag(cmd *cobra.Command, key *string) {
	cmd.Flags().StringVar(key, "idempotency-key", "", "the submission's Idempotency-Key (default a new random one): the server creates one run for all submissions with one key, within 24h, and answers each with it; 1 to 255 letters, digits and - _ . : + / =")
}

// existingRuns is the runs args name, once each is known to exist.
func existingRuns(ctx context.Context, eng engine, args []string) ([]apiv1.RunID, error) {
	ids := make([]apiv1.RunID, len(args))
	for i, a := range args {
		ids[i] = apiv1.RunID(a)
		if _, err := eng.GetRunHead(ctx, ids[i]); err != nil {
			return nil, err
		}
	}
	return ids, nil
}
