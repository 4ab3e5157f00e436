package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// newSuspendCmd builds kiln suspend (suspend true) or kiln unsuspend.
func newSuspendCmd(e *env, suspend bool) *cobra.Command {
	verb := map[bool]string{true: "suspend", false: "unsuspend"}[suspend]
	short := "Suspend a run: start nothing new, stop its training jobs, freeze its timeouts; running tasks finish"
	if !suspend {
		short = "Resume a suspended run: what was suspended starts again"
	}
	cmd := &cobra.Command{
		Use:   verb + " RUN",
		Short: short,
		Args:  one(fmt.Sprintf("kiln %s takes the ID of one run: kiln %s RUN", verb, verb)),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			if err := eng.Suspend(cmd.Context(), apiv1.RunID(args[0]), suspend); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s requested: the engine working %s acts on it within a second "+
				"(if none works it, kiln resume will)\n", verb, args[0])
			return nil
		},
	}
	cmd.AddCommand(newSuspendScheduleCmd(e, suspend))
	return cmd
}
