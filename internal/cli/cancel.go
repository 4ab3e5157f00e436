package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

func newCancelCmd(e *env) *cobra.Command {
	var pool poolFlags
	cmd := &cobra.Command{
		Use:   "cancel RUN",
		Short: "Cancel a run: stop its running tasks and start nothing new",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if c := e.remote(); c != nil {
				if err := c.Cancel(cmd.Context(), apiv1.RunID(args[0])); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "cancel requested: the server stops %s\n", args[0])
				return nil
			}
			a, err := openEngine(cmd.Context(), e, &pool)
			if err != nil {
				return err
			}
			defer a.Close()
			id := apiv1.RunID(args[0])
			run, err := getRun(cmd, a.Store, args[0])
			if err != nil {
				return err
			}
			if run.Status.Phase.Done() {
				fmt.Fprintf(e.stdout, "run %s already ended: %s\n", id, run.Status.Phase)
				return nil
			}
			if err := a.Store.RequestCancel(cmd.Context(), id); errors.Is(err, store.ErrNotFound) {
				return &apiv1.Error{Code: apiv1.CodeRunNotFound, Object: "Run/" + args[0], Message: "no such run"}
			} else if err != nil {
				return err
			}
			// If no live engine owns the run, this process stops it itself.
			a.Start()
			claimed, err := a.Claim(cmd.Context(), id)
			if err != nil {
				return err
			}
			if len(claimed) == 0 {
				fmt.Fprintf(e.stdout, "cancel requested: the engine running %s stops it\n", id)
				return nil
			}
			if err := a.Controller.Cancel(cmd.Context(), id); err != nil {
				return err
			}
			<-a.Controller.Done(id)
			fmt.Fprintf(e.stdout, "run %s cancelled\n", id)
			return nil
		},
	}
	return cmd
}
