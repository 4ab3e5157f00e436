package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/gc"
)

func newDeleteRunCmd(e *env) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:     "run RUN...",
		Aliases: []string{"runs"},
		Short:   "Delete runs that have ended: their records, logs and outputs",
		Long: "Delete runs that have ended: their records, events, logs and outputs. A run that has not ended is\n" +
			"refused (KLN-4010); with --force it is cancelled first and deleted once it has ended, if it ends within\n" +
			"30s. Cached results are never deleted with a run.",
		Args: between(1, -1, "kiln delete run takes the IDs of runs: kiln delete run RUN..."),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), working, nil)
			if err != nil {
				return err
			}
			defer done()
			var errs []error
			for _, id := range args {
				if err := eng.DeleteRun(cmd.Context(), apiv1.RunID(id), force); err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(e.stdout, "run %s deleted\n", id)
			}
			return errors.Join(errs...)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "cancel a run that has not ended, wait until it has, then delete it")
	return cmd
}

func newGCCmd(e *env) *cobra.Command {
	var dryRun bool
	var output string
	var life lifeFlags
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Delete runs past their TTL or over their history limit, and orphan run directories, once",
		Long: "Delete, once, every finished run past its spec's ttlSecondsAfterFinished or beyond its name's history\n" +
			"limit (spec.historyLimit, else --history-succeeded and --history-failed), and every directory under\n" +
			"KILN_HOME/runs older than 10 minutes whose run has no record. Prints what it deleted and why; with\n" +
			"--dry-run, what it would delete. kiln serve and kiln run do this every minute while they work.\n" +
			"Cached results (KILN_HOME/cache) are never touched.",
		Args: none("kiln gc takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if e.server != "" {
				return usagef("kiln gc works on the kiln home of this machine, not through a server (--server or KILN_SERVER is set): " +
					"a server collects runs itself (kiln serve --gc-interval); run kiln gc on its machine with its --home, without --server")
			}
			history, err := life.history()
			if err != nil {
				return err
			}
			a, err := e.openApp(cmd.Context(), working, nil, func(cfg *app.Config) error { cfg.History = history; return nil })
			if err != nil {
				return err
			}
			defer a.Close()
			deleted, err := a.CollectRuns(cmd.Context(), dryRun)
			return errors.Join(printDeletions(e, deleted, dryRun, output), err)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be deleted, and delete nothing")
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml prints the list as data")
	life.addHistory(cmd)
	return cmd
}

func printDeletions(e *env, deleted []gc.Deletion, dryRun bool, output string) error {
	if deleted == nil {
		deleted = []gc.Deletion{}
	}
	if done, err := printList(e.stdout, output, "Deletion", deleted); done || err != nil {
		return err
	}
	verb := "deleted"
	if dryRun {
		verb = "would delete"
	}
	for _, d := range deleted {
		if d.Deferred != "" {
			fmt.Fprintf(e.stdout, "deferred %s (%s: %s): %s\n", d.Run, d.Reason, d.Detail, d.Deferred)
			continue
		}
		fmt.Fprintf(e.stdout, "%s %s (%s: %s)\n", verb, d.Run, d.Reason, d.Detail)
	}
	if len(deleted) == 0 {
		fmt.Fprintln(e.stdout, "nothing to delete")
	}
	return nil
}
