package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/workflow"
)

func newGetCmd(e *env) *cobra.Command {
	get := group("get", "List resources")
	var output, phase string
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
			page, err := eng.ListRuns(cmd.Context(), apiv1.RunQuery{Phase: want, Limit: limit})
			if err != nil {
				return err
			}
			list := page.Items
			if done, err := printObject(e.stdout, output, list); done {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tPHASE\tPROGRESS\tAGE\tDURATION\tMESSAGE")
			for _, r := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Name, r.Status.Phase, progressCell(r.Status.Progress), age(r.CreatedAt),
					duration(r.Status.StartedAt, r.Status.FinishedAt), oneLine(r.Status.Message))
			}
			return tw.Flush()
		},
	}
	runs.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml")
	runs.Flags().StringVar(&phase, "phase", "", "only runs in this phase")
	runs.Flags().IntVar(&limit, "limit", 50, "at most this many runs")
	get.AddCommand(runs, newGetRuntimesCmd(e), newGetTemplatesCmd(e), newGetTrainJobCmd(e))
	return get
}

func newGetRuntimesCmd(e *env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "runtimes [FILE...]",
		Aliases: []string{"runtime"},
		Short:   "List training runtimes: the built-in ones, overridden by those in FILE...",
		RunE: func(cmd *cobra.Command, files []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			base, err := eng.Runtimes(cmd.Context())
			if err != nil {
				return err
			}
			list, err := runtimesIn(base, files)
			if err != nil {
				return err
			}
			if done, err := printObject(e.stdout, output, list); done {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tFRAMEWORK\tNODES\tGANG TIMEOUT\tSOURCE")
			for _, rt := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", rt.Metadata.Name, framework(rt.Spec.MLPolicy), nodes(rt.Spec.MLPolicy),
					gangTimeout(rt.Spec.GangPolicy), source(rt))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml")
	return cmd
}

// runtimesIn returns base with the runtimes in files replacing them by
// name, sorted by name.
func runtimesIn(base []apiv1.TrainingRuntime, files []string) ([]apiv1.TrainingRuntime, error) {
	byName := map[string]apiv1.TrainingRuntime{}
	for _, rt := range base {
		byName[rt.Metadata.Name] = rt
	}
	docs, err := workflow.ReadFiles(files)
	if err != nil {
		return nil, err
	}
	docs, terr := workflow.Translate(docs) // Trainer's and training-operator's documents too
	user, err := workflow.UserRuntimes(docs)
	err = errors.Join(terr, err)
	for _, rt := range user {
		byName[rt.Metadata.Name] = rt
	}
	list := make([]apiv1.TrainingRuntime, 0, len(byName))
	for _, rt := range byName {
		list = append(list, rt)
	}
	slices.SortFunc(list, func(a, b apiv1.TrainingRuntime) int { return strings.Compare(a.Metadata.Name, b.Metadata.Name) })
	return list, err
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

func nodes(p *apiv1.MLPolicy) string {
	if p == nil || p.NumNodes == nil {
		return "1"
	}
	return fmt.Sprint(*p.NumNodes)
}

func gangTimeout(g *apiv1.GangPolicy) string {
	if g == nil || g.ScheduleTimeoutSeconds == nil {
		return "none"
	}
	return fmt.Sprintf("%ds", *g.ScheduleTimeoutSeconds)
}

func source(rt apiv1.TrainingRuntime) string {
	if s := rt.Metadata.Annotations["kiln.dev/source"]; s != "" {
		return s
	}
	return "built-in"
}

func phaseList() string {
	var names []string
	for _, p := range apiv1.RunPhases() {
		names = append(names, string(p))
	}
	return strings.Join(names, ", ")
}
