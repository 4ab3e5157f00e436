package cli

import (
	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newRetryCmd(e *env) *cobra.Command {
	var pool poolFlags
	var quiet bool
	cmd := &cobra.Command{
		Use:   "retry RUN",
		Short: "Run a failed or cancelled run again from where it stopped, and watch it",
		Long: "Tasks that succeeded keep their outputs and do not run again; the others start afresh,\n" +
			"with a fresh retry budget. Exits 0 only if the run then succeeds. Retrying a run that has not\n" +
			"failed or been cancelled is an error (KLN-4010).",
		Args: one("kiln retry takes the ID of one run: kiln retry RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := apiv1.RunID(args[0])
			eng, done, err := e.open(cmd.Context(), working, &pool)
			if err != nil {
				return err
			}
			defer done()
			if err := eng.Retry(cmd.Context(), id); err != nil {
				return err
			}
			return watchRuns(e, eng, []apiv1.RunID{id}, quiet)
		},
	}
	pool.add(cmd)
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the final summary")
	return cmd
}
