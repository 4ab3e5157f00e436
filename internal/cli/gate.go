package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// gateRefusals is the part of a gate command's help that names its errors.
const gateRefusals = "It is an error (KLN-4014) if TASK is not a gate waiting for this: not a gate, not yet waiting,\n" +
	"already decided, or a gate of another kind; KLN-4010 if the run has ended, KLN-4001 if there is no\n" +
	"such run. With --server the sender recorded is the token's name and role; else the local user.\n" +
	"`kiln describe run RUN` shows what each gate waits for, and who decided it."

// newApproveCmd builds kiln approve (approve true) or kiln reject.
func newApproveCmd(e *env, approve bool) *cobra.Command {
	verb, done, what := "approve", "approved", "Approve a gate task waiting for an approval: the task succeeds and the run goes on"
	if !approve {
		verb, done, what = "reject", "rejected", "Reject a gate task waiting for an approval: the task fails (KLN-3015)"
	}
	var reason string
	cmd := &cobra.Command{
		Use:   verb + " RUN TASK",
		Short: what,
		Long:  what + ".\nThe decision and its reason are kept with the task.\n" + gateRefusals,
		Args:  between(2, 2, fmt.Sprintf("kiln %s takes a run and one of its gate tasks: kiln %s RUN TASK", verb, verb)),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := apiv1.GateInput{Approve: &approve, Reason: reason}
			return sendGateInput(cmd, e, args, in, done)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, kept with the decision")
	return cmd
}

func newSignalCmd(e *env) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "signal RUN TASK VALUE",
		Short: "Send a value to a gate task waiting for a signal: the task succeeds with it as its output \"value\"",
		Long: "Send a value to a gate task waiting for a signal: the task succeeds with VALUE as its output\n" +
			"parameter \"value\", which later tasks read as {{tasks.TASK.outputs.parameters.value}}.\n" +
			"VALUE must parse as the gate's type: string (the default, anything), int (42), float (0.5),\n" +
			"bool (true or false) or json ({\"lr\": 0.1}); one that does not is KLN-4014, quoted with the type.\n" +
			"A value over 64 KiB is KLN-1023. A value that starts with '-' comes after --:\n" +
			"kiln signal RUN TASK -- -3.\n" + gateRefusals,
		Args: between(3, 3, "kiln signal takes a run, one of its gate tasks and a value: kiln signal RUN TASK VALUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := apiv1.GateInput{Value: &args[2], Reason: reason}
			return sendGateInput(cmd, e, args, in, "signalled")
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, kept with the value")
	return cmd
}

// sendGateInput sends in to task args[1] of run args[0] and says so.
func sendGateInput(cmd *cobra.Command, e *env, args []string, in apiv1.GateInput, done string) error {
	eng, release, err := e.open(cmd.Context(), reading, nil)
	if err != nil {
		return err
	}
	defer release()
	id, task := apiv1.RunID(args[0]), args[1]
	if err := eng.SendGateInput(cmd.Context(), id, task, in); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s gate %s of run %s\n", done, task, id)
	return nil
}
