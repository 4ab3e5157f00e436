package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

func newGetCmd(e *env) *cobra.Command {
	get := &cobra.Command{Use: "get", Short: "List resources"}
	var output, phase string
	var limit int
	runs := &cobra.Command{
		Use:     "runs",
		Aliases: []string{"run"},
		Short:   "List runs, newest first",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := openStore(cmd.Context(), e)
			if err != nil {
				return err
			}
			defer a.Close()
			list, err := a.Store.ListRuns(cmd.Context(), store.ListRunsParams{Phase: apiv1.Phase(phase), Limit: limit})
			if err != nil {
				return err
			}
			if done, err := printObject(e.stdout, output, list); done {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tPHASE\tAGE\tDURATION\tMESSAGE")
			for _, r := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Name, r.Status.Phase, age(r.CreatedAt),
					duration(r.Status.StartedAt, r.Status.FinishedAt), oneLine(r.Status.Message))
			}
			return tw.Flush()
		},
	}
	runs.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml")
	runs.Flags().StringVar(&phase, "phase", "", "only runs in this phase")
	runs.Flags().IntVar(&limit, "limit", 50, "at most this many runs")
	get.AddCommand(runs)
	return get
}
