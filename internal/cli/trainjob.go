package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	trainerv1 "kiln.dev/kiln/api/trainer/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// newGetTrainJobCmd shows a TrainJob's run as Kubeflow Trainer's TrainJob
// object reads: conditions, jobsStatus and trainerStatus.
func newGetTrainJobCmd(e *env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "trainjob [RUN|NAME]",
		Aliases: []string{"trainjobs"},
		Short:   "List TrainJob runs, or show one's status in Kubeflow Trainer's shape (a run ID, or the latest run of that name)",
		Args:    between(0, 1, "kiln get trainjob takes at most a run ID or a TrainJob's name: kiln get trainjob [RUN|NAME]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			if len(args) == 0 {
				return listTrainJobs(cmd, e, eng, output)
			}
			run, err := trainJobRun(cmd, eng, args[0])
			if err != nil {
				return err
			}
			view, ok := trainerv1.ViewOf(run)
			if !ok {
				return &apiv1.Error{
					Code: apiv1.CodeNotTrainJob, Object: "Run/" + string(run.ID),
					Message: fmt.Sprintf("the run is of a %s, not a TrainJob", run.Kind), Hint: "kiln describe run " + string(run.ID) + " shows its training tasks",
				}
			}
			if done, err := printObject(e.stdout, output, view); done {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tRUN\tSTATE\tPROGRESS\tAGE")
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", view.Metadata.Name, run.ID, trainJobState(view), trainerProgress(view.Status.TrainerStatus), age(run.CreatedAt))
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml or jsonpath=TEMPLATE (Trainer's TrainJob with its status)")
	return cmd
}

// trainJobRun finds the run named by arg: a run's ID, else the latest
// run of a TrainJob of that name.
func trainJobRun(cmd *cobra.Command, eng engine, arg string) (*apiv1.Run, error) {
	run, err := eng.GetRun(cmd.Context(), apiv1.RunID(arg))
	if err == nil || apiv1.CodeOf(err) != apiv1.CodeRunNotFound {
		return run, err
	}
	page, lerr := eng.ListRuns(cmd.Context(), apiv1.RunQuery{Name: arg, Limit: 50})
	if lerr != nil {
		return nil, lerr
	}
	for _, r := range page.Items {
		if r.Kind == trainerv1.KindTrainJob {
			return eng.GetRun(cmd.Context(), r.ID)
		}
	}
	return nil, &apiv1.Error{
		Code: apiv1.CodeNotTrainJob, Object: arg,
		Message: fmt.Sprintf("no run has ID %s, and no TrainJob named %s has run", arg, arg), Hint: "kiln get runs lists runs",
	}
}

// trainJobState is the latest condition that holds, as Trainer's STATE
// column shows it.
func trainJobState(v *trainerv1.TrainJobView) string {
	state := ""
	var at int64
	for _, c := range v.Status.Conditions {
		if c.Status == "True" && c.LastTransitionTime.UnixNano() >= at {
			state, at = c.Type, c.LastTransitionTime.UnixNano()
		}
	}
	return state
}

func trainerProgress(ts *apiv1.TrainerStatus) string {
	if ts == nil || ts.ProgressPercentage == nil {
		return "-"
	}
	return fmt.Sprintf("%d%%", *ts.ProgressPercentage)
}

// listTrainJobs lists the runs of TrainJobs, newest first, among the
// latest 500 runs, their state as Trainer's STATE column says it.
func listTrainJobs(cmd *cobra.Command, e *env, eng engine, output string) error {
	page, err := eng.ListRuns(cmd.Context(), apiv1.RunQuery{Limit: 500})
	if err != nil {
		return err
	}
	jobs := []*apiv1.Run{} // -o json prints [] when there are none
	for _, r := range page.Items {
		if r.Kind == trainerv1.KindTrainJob {
			jobs = append(jobs, r)
		}
	}
	if done, err := printList(e.stdout, output, "Run", jobs); done {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tRUN\tSTATE\tAGE\tMESSAGE")
	for _, r := range jobs {
		state, why := listedState(cmd, eng, r)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.ID, state, age(r.CreatedAt), why)
	}
	return tw.Flush()
}

// listedState is a listed job's state and, while it is queued, why: a
// job that has not ended is read whole, for its conditions (a gang still
// waiting for room is Queued, not Running); an ended one is told by its
// phase.
func listedState(cmd *cobra.Command, eng engine, r *apiv1.Run) (string, string) {
	if r.Status.Phase.Done() || r.Suspend {
		return phaseState(r), ""
	}
	run, err := eng.GetRun(cmd.Context(), r.ID)
	if err != nil {
		return phaseState(r), ""
	}
	view, ok := trainerv1.ViewOf(run)
	state := ""
	if ok {
		state = trainJobState(view)
	}
	if state == "" || state == apiv1.ConditionCreated {
		return phaseState(r), ""
	}
	for _, c := range view.Status.Conditions {
		if c.Type == apiv1.ConditionQueued && state == apiv1.ConditionQueued {
			return state, strings.TrimSpace(c.Reason + ": " + c.Message)
		}
	}
	return state, ""
}

// phaseState is a run's phase in the words of Trainer's conditions.
func phaseState(r *apiv1.Run) string {
	switch {
	case r.Suspend && !r.Status.Phase.Done():
		return apiv1.ConditionSuspended
	case r.Status.Phase == apiv1.PhaseSucceeded:
		return apiv1.ConditionComplete
	case r.Status.Phase == apiv1.PhaseFailed, r.Status.Phase == apiv1.PhaseCancelled:
		return apiv1.ConditionFailed
	case r.Status.Phase == apiv1.PhaseRunning:
		return apiv1.ConditionRunning
	}
	return apiv1.ConditionCreated
}
