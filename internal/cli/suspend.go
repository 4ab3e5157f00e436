package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
)

// newSuspendCmd builds kiln suspend (suspend true) or kiln unsuspend.
func newSuspendCmd(e *env, suspend bool) *cobra.Command {
	use, short := "suspend RUN", "Suspend a run's training jobs: stop their processes and release their resources"
	if !suspend {
		use, short = "unsuspend RUN", "Start a run's suspended training jobs again"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if c := e.remote(); c != nil {
				if err := c.Suspend(cmd.Context(), apiv1.RunID(args[0]), suspend); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s requested: the server acts on it within a second\n", map[bool]string{true: "suspend", false: "unsuspend"}[suspend])
				return nil
			}
			return withRun(cmd, e, args[0], func(a *app.App, run *apiv1.Run) error {
				return requestSuspend(cmd, e, a, run, suspend)
			})
		},
	}
}

func requestSuspend(cmd *cobra.Command, e *env, a *app.App, run *apiv1.Run, suspend bool) error {
	if run.Status.Phase.Done() {
		fmt.Fprintf(e.stdout, "run %s already ended: %s\n", run.ID, run.Status.Phase)
		return nil
	}
	if err := a.Store.RequestSuspend(cmd.Context(), run.ID, suspend); err != nil {
		return err
	}
	verb := map[bool]string{true: "suspend", false: "unsuspend"}[suspend]
	fmt.Fprintf(e.stdout, "%s requested: the engine running %s acts on it within a second "+
		"(if none runs it, kiln resume will)\n", verb, run.ID)
	return nil
}
