package cli

import (
	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newRetryCmd(e *env) *cobra.Command {
	var pool poolFlags
	var quiet, restart bool
	var params, nodes []string
	cmd := &cobra.Command{
		Use:   "retry RUN",
		Short: "Run a failed or cancelled run again from where it stopped, and watch it",
		Long: "Tasks that succeeded keep their outputs and do not run again; the others start afresh, with a\n" +
			"fresh retry budget, the skipped and cancelled items of maps and subworkflows included, and the\n" +
			"exit handlers run again at the new end (as Argo's retry). -p changes params for what runs again;\n" +
			"--restart-successful --node TASK runs TASK and everything downstream of it again although it\n" +
			"succeeded. Exits 0 only if the run then succeeds. Retrying a run that has not failed or been\n" +
			"cancelled is an error (KLN-4010).",
		Args: one("kiln retry takes the ID of one run: kiln retry RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			given, err := parseParams(params)
			if err != nil {
				return err
			}
			id := apiv1.RunID(args[0])
			eng, done, err := e.open(cmd.Context(), working, &pool)
			if err != nil {
				return err
			}
			defer done()
			req := apiv1.RetryRequest{Params: given, RestartSuccessful: restart, Nodes: nodes}
			if err := eng.Retry(cmd.Context(), id, req); err != nil {
				return err
			}
			return watchRuns(e, eng, []apiv1.RunID{id}, quiet)
		},
	}
	pool.add(cmd)
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the final summary")
	cmd.Flags().StringArrayVarP(&params, "param", "p", nil, "change a workflow parameter for what runs again, name=value (repeatable)")
	cmd.Flags().BoolVar(&restart, "restart-successful", false, "run the --node tasks again although they succeeded, with everything downstream of them")
	cmd.Flags().StringArrayVar(&nodes, "node", nil, "a top-level task --restart-successful restarts (repeatable)")
	return cmd
}
