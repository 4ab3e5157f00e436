package cli

import (
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newGetSchedulesCmd(e *env) *cobra.Command {
	var output, project string
	cmd := &cobra.Command{
		Use:     "schedules [NAME]",
		Aliases: []string{"schedule"},
		Short:   "List a project's Schedules, or show one",
		Long: "List a project's Schedules (stored with kiln apply -f FILE), or show one: its cron expression,\n" +
			"time zone, whether it is suspended, its unfinished runs, its latest tick that started a run and\n" +
			"its next one. -o yaml shows the whole status: ticks missed and skipped, and why.",
		Args: between(0, 1, "kiln get schedules takes at most one schedule's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			var list []*apiv1.Schedule
			var shown any
			if len(args) == 1 {
				s, err := eng.GetSchedule(cmd.Context(), project, args[0])
				if err != nil {
					return err
				}
				list, shown = []*apiv1.Schedule{s}, s
			} else if list, err = eng.ListSchedules(cmd.Context(), project); err != nil {
				return err
			} else {
				shown = list
			}
			if len(args) == 0 {
				shown = listDoc{APIVersion: apiv1.APIVersion, Kind: "ScheduleList", Items: nonNil(list)}
			}
			if done, err := printObject(e.stdout, output, shown); done {
				return err
			}
			return printSchedules(e, list)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml or jsonpath=TEMPLATE (what yaml prints, kiln apply takes back)")
	cmd.Flags().StringVar(&project, "project", "default", "the project whose schedules to list")
	return cmd
}

func printSchedules(e *env, list []*apiv1.Schedule) error {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCHEDULE\tTIMEZONE\tSUSPEND\tACTIVE\tLAST SCHEDULE\tNEXT")
	for _, s := range list {
		last, next, active := "-", "-", 0
		if st := s.Status; st != nil {
			if st.LastScheduleTime != nil {
				last = age(*st.LastScheduleTime)
			}
			if st.NextScheduleTime != nil {
				next = until(*st.NextScheduleTime)
			} else if st.Never {
				next = "never"
			}
			active = len(st.Active)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", s.Metadata.Name, s.Spec.Schedule, s.Spec.Zone(),
			strconv.FormatBool(s.Spec.Suspend), active, last, next)
	}
	return tw.Flush()
}

// until says how long until t, as age says how long since.
func until(t time.Time) string {
	d := time.Until(t)
	if d <= 0 {
		return "now"
	}
	return "in " + (d + time.Second - 1).Truncate(time.Second).String()
}

func newDeleteScheduleCmd(e *env) *cobra.Command {
	var project string
	cmd := &cobra.Command{
		Use:     "schedule NAME",
		Aliases: []string{"schedules"},
		Short:   "Delete a Schedule; the runs it started stay",
		Args:    one("kiln delete schedule takes the schedule's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			if err := eng.DeleteSchedule(cmd.Context(), project, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Schedule/%s deleted from project %s\n", args[0], project)
			return nil
		},
	}
	cmd.Flags().StringVar(&project, "project", "default", "the project that stores the schedule")
	return cmd
}

// newSuspendScheduleCmd builds kiln suspend schedule (suspend true) or
// kiln unsuspend schedule.
func newSuspendScheduleCmd(e *env, suspend bool) *cobra.Command {
	verb := map[bool]string{true: "suspend", false: "unsuspend"}[suspend]
	short := "Stop a Schedule from starting runs; its runs go on"
	if !suspend {
		short = "Let a suspended Schedule start runs again; ticks it missed follow startingDeadlineSeconds"
	}
	var project string
	cmd := &cobra.Command{
		Use:     "schedule NAME",
		Aliases: []string{"schedules"},
		Short:   short,
		Args:    one(fmt.Sprintf("kiln %s schedule takes the schedule's name", verb)),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			s, err := eng.SuspendSchedule(cmd.Context(), project, args[0], suspend)
			if err != nil {
				return err
			}
			next := "none while suspended"
			if s.Status != nil && s.Status.NextScheduleTime != nil {
				next = s.Status.NextScheduleTime.Format(time.RFC3339)
			}
			fmt.Fprintf(e.stdout, "Schedule/%s %sed in project %s; next tick: %s\n", args[0], verb, project, next)
			return nil
		},
	}
	cmd.Flags().StringVar(&project, "project", "default", "the project that stores the schedule")
	return cmd
}
