package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// newCancelCmd builds kiln cancel: argo terminate.
func newCancelCmd(e *env) *cobra.Command {
	return newEndCmd(e, endCmd{
		verb:  "cancel",
		short: "Cancel a run: stop its running tasks and start nothing new",
		long: "Cancel a run: its running tasks get SIGTERM, then SIGKILL after 10s, and nothing new starts, its exit\n" +
			"handlers neither (kiln stop runs them).",
		ask:   func(eng engine) func(context.Context, apiv1.RunID) error { return eng.Cancel },
		doing: "stops its tasks and starts nothing new",
	})
}

// newStopCmd builds kiln stop: argo stop.
func newStopCmd(e *env) *cobra.Command {
	return newEndCmd(e, endCmd{
		verb:  "stop",
		short: "Stop a run: stop its running tasks, start nothing new but its exit handlers",
		long: "Stop a run, as argo stop does: its running tasks get SIGTERM, then SIGKILL after 10s, nothing new\n" +
			"starts but its exit handlers (onExit), which run and see the run Failed; it ends Failed (KLN-3020).\n" +
			"kiln cancel ends a run without running its exit handlers.",
		ask:   func(eng engine) func(context.Context, apiv1.RunID) error { return eng.Stop },
		doing: "stops its tasks and runs its exit handlers",
	})
}

// endCmd is a command that asks for a run to end.
type endCmd struct {
	verb, short, long string
	ask               func(engine) func(context.Context, apiv1.RunID) error
	doing             string // what the engine does on the request
}

// newEndCmd builds the command ec describes.
func newEndCmd(e *env, ec endCmd) *cobra.Command {
	var pool poolFlags
	cmd := &cobra.Command{
		Use:   ec.verb + " RUN",
		Short: ec.short,
		Long: ec.long + "\nA run whose engine is gone is handled by this command itself, which waits until it has ended.\n" +
			fmt.Sprintf("Asking to %s a run that has ended is an error (KLN-4010).", ec.verb),
		Args: one(fmt.Sprintf("kiln %s takes the ID of one run: kiln %s RUN", ec.verb, ec.verb)),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), working, &pool)
			if err != nil {
				return err
			}
			defer done()
			id := apiv1.RunID(args[0])
			if err := ec.ask(eng)(cmd.Context(), id); err != nil {
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
			fmt.Fprintf(e.stdout, "%s requested: the engine working %s %s\n", ec.verb, id, ec.doing)
			return nil
		},
	}
	pool.add(cmd)
	return cmd
}
