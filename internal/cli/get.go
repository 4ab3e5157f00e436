package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newGetCmd(e *env) *cobra.Command {
	get := group("get", "List resources")
	var output, phase, project, label string
	var limit int
	runs := &cobra.Command{
		Use:     "runs",
		Aliases: []string{"run"},
		Short:   "List runs, newest first",
		Args:    none("kiln get runs takes no arguments; filter with --phase"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			want, ok := apiv1.ParseRunPhase(phase)
			if !ok && phase != "" {
				return usagef("--phase %q is not a phase a run can be in; one of: %s", phase, phaseList())
			}
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			page, err := eng.ListRuns(cmd.Context(), apiv1.RunQuery{Phase: want, Limit: limit, Project: project, Label: label})
			if err != nil {
				return err
			}
			list := page.Items
			if output == "name" { // one ID a line, for scripts: kiln get runs -o name | xargs ...
				for _, r := range list {
					fmt.Fprintln(e.stdout, r.ID)
				}
				return nil
			}
			if done, err := printObject(e.stdout, output, list); done {
				return err
			}
			return writeRuns(e.stdout, list)
		},
	}
	runs.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml, or name (the run IDs alone, one a line)")
	runs.Flags().StringVar(&phase, "phase", "", "only runs in this phase")
	runs.Flags().IntVar(&limit, "limit", 50, "at most this many runs")
	runs.Flags().StringVar(&project, "project", "", "only runs of this project (default: every project the token may read)")
	runs.Flags().StringVarP(&label, "selector", "l", "", "only runs with this label, key=value (a schedule's runs: -l kiln.dev/schedule=NAME)")
	get.AddCommand(runs, newGetRuntimesCmd(e), newGetTemplatesCmd(e), newGetTrainJobCmd(e), newGetSchedulesCmd(e), newGetQuotasCmd(e))
	return get
}

// writeRuns writes get runs' table of runs.
func writeRuns(w io.Writer, list []*apiv1.Run) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPHASE\tPROGRESS\tAGE\tDURATION\tMESSAGE")
	for _, r := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, runName(r), r.Status.Phase, progressCell(r.Status.Progress), age(r.CreatedAt),
			duration(r.Status.StartedAt, r.Status.FinishedAt), oneLine(r.Status.Message))
	}
	return tw.Flush()
}

func framework(p *apiv1.MLPolicy) string {
	switch {
	case p == nil:
		return "-"
	case p.Torch != nil:
		return "torch"
	case p.MPI != nil:
		return "mpi"
	case p.XGBoost != nil:
		return "xgboost"
	case p.TensorFlow != nil:
		return "tensorflow"
	case p.JAX != nil:
		return "jax"
	case p.Plain != nil:
		return "plain"
	}
	return "-"
}

func phaseList() string {
	var names []string
	for _, p := range apiv1.RunPhases() {
		names = append(names, string(p))
	}
	return strings.Join(names, ", ")
}
