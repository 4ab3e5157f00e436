package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newCancelCmd(e *env) *cobra.Command {
	var pool poolFlags
	cmd := &cobra.Command{
		Use:   "cancel RUN",
		Short: "Cancel a run: stop its running tasks and start nothing new",
		Long: "Cancel a run: its running tasks get SIGTERM, then SIGKILL after 10s, and nothing new starts.\n" +
			"A run whose engine is gone is cancelled by this command itself, which waits until it has ended.\n" +
			"Cancelling a run that has ended is an error (KLN-4010).",
		Args: one("kiln cancel takes the ID of one run: kiln cancel RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), working, &pool)
			if err != nil {
				return err
			}
			defer done()
			id := apiv1.RunID(args[0])
			if err := eng.Cancel(cmd.Context(), id); err != nil {
				return err
			}
			run, err := eng.GetRun(cmd.Context(), id)
			if err != nil {
				return err
			}
			if run.Status.Phase.Done() {
				fmt.Fprintf(e.stdout, "run %s %s\n", id, run.Status.Phase)
				return nil
			}
			fmt.Fprintf(e.stdout, "cancel requested: the engine working %s stops its tasks and starts nothing new\n", id)
			return nil
		},
	}
	pool.add(cmd)
	return cmd
}
