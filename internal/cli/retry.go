package cli

import (
	"errors"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

func newRetryCmd(e *env) *cobra.Command {
	var pool poolFlags
	var quiet bool
	cmd := &cobra.Command{
		Use:   "retry RUN",
		Short: "Run a failed or cancelled run again from where it stopped, and watch it",
		Long: "Tasks that succeeded keep their outputs and do not run again; the others start afresh,\n" +
			"with a fresh retry budget. Exits 0 only if the run then succeeds.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := apiv1.RunID(args[0])
			if c := e.remote(); c != nil {
				if err := c.Retry(cmd.Context(), id); err != nil {
					return err
				}
				return watchRuns(e, remoteWatcher(e, c, quiet), []apiv1.RunID{id}, c.Cancel)
			}
			a, err := openEngine(cmd.Context(), e, &pool)
			if err != nil {
				return err
			}
			defer a.Close()
			a.Start()
			err = a.Retry(cmd.Context(), id)
			switch {
			case errors.Is(err, store.ErrNotFound):
				return &apiv1.Error{Code: apiv1.CodeRunNotFound, Object: "Run/" + args[0], Message: "no such run"}
			case errors.Is(err, store.ErrConflict):
				return usagef("%v", err)
			case err != nil:
				return err
			}
			w, stop := embeddedWatcher(e, a, quiet)
			defer stop()
			return watchRuns(e, w, []apiv1.RunID{id}, a.Controller.Cancel)
		},
	}
	pool.add(cmd)
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the final summary")
	return cmd
}
