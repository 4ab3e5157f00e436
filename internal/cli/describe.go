package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// runDetail is what describe -o json|yaml prints.
type runDetail struct {
	*apiv1.Run `json:",inline"`
	Events     []apiv1.Event `json:"events"`
	// EventsLeftOut is how many earlier events --events left out.
	EventsLeftOut int `json:"eventsLeftOut,omitempty"`
}

// defaultEvents is how many of a run's last events describe shows.
const defaultEvents = 20

func newDescribeCmd(e *env) *cobra.Command {
	describe := group("describe", "Show one resource in detail")
	var output string
	var allChildren bool
	var events int
	run := &cobra.Command{
		Use:     "run ID",
		Aliases: []string{"runs"},
		Short:   "Show a run: its tasks, attempts, errors and events",
		Args:    one("kiln describe run takes the ID of one run: kiln describe run ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if events < -1 {
				return &apiv1.Error{
					Code: apiv1.CodeUsage, Field: "--events", Message: fmt.Sprintf("%d is not a number of events", events),
					Hint: "give N for the last N events, -1 for all of them or 0 for none",
				}
			}
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			r, unread, err := describedRun(cmd.Context(), eng, apiv1.RunID(args[0]), output != "", allChildren)
			if err != nil {
				return err
			}
			n := events
			if output != "" && !cmd.Flags().Changed("events") {
				n = -1 // a document holds every event unless asked otherwise
			}
			list, err := lastEvents(cmd, eng, r.ID, n)
			if err != nil {
				return err
			}
			left := max(list.Total-len(list.Items), 0)
			if done, err := printObject(e.stdout, output, runDetail{Run: r, Events: list.Items, EventsLeftOut: left}); done {
				return err
			}
			writeDescription(e.stdout, r, unread, list.Items, allChildren)
			if left > 0 {
				fmt.Fprintf(e.stdout, "  (%s not shown; kiln describe run %s --events=-1 shows all)\n", plural(left, "earlier event"), r.ID)
			}
			return nil
		},
	}
	run.Flags().IntVar(&events, "events", defaultEvents, "show the run's last N events; -1 shows all, 0 none")
	run.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml or jsonpath=TEMPLATE")
	run.Flags().BoolVar(&allChildren, "children", false,
		fmt.Sprintf("list every child of a map, dynamic or subworkflow task; by default a task with more than %d lists only those that did not succeed", foldAbove))
	describe.AddCommand(run)
	return describe
}

// lastEvents is the last n events of run id, and how many there are in
// all; every event for a negative n.
func lastEvents(cmd *cobra.Command, eng engine, id apiv1.RunID, n int) (*apiv1.EventList, error) {
	switch {
	case n < 0 || n > apiv1.MaxEventPage:
		all, err := eng.Events(cmd.Context(), id, 0)
		total := len(all)
		if n > 0 && len(all) > n {
			all = all[len(all)-n:]
		}
		return &apiv1.EventList{Items: all, Total: total}, err
	case n == 0:
		list, err := eng.EventPage(cmd.Context(), id, apiv1.EventQuery{Tail: 1})
		if err != nil {
			return nil, err
		}
		return &apiv1.EventList{Items: []apiv1.Event{}, Total: list.Total}, nil
	}
	return eng.EventPage(cmd.Context(), id, apiv1.EventQuery{Tail: n})
}

// describedRun reads run id as describe shows it: whole for a document
// (-o), else without the children of large groups that it only counts
// (see describedNodes), which it returns counted by phase.
func describedRun(ctx context.Context, eng engine, id apiv1.RunID, whole, allChildren bool) (*apiv1.Run, map[string]map[apiv1.Phase]int, error) {
	if whole {
		r, err := eng.GetRun(ctx, id)
		return r, nil, err
	}
	r, err := eng.GetRunHead(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	nodes, unread, err := describedNodes(ctx, eng, id, allChildren)
	r.Status.Nodes = nodes
	return r, unread, err
}

// writeDescription writes run r as describe shows it. A group's many
// children are folded (see nodeTable) unless allChildren is set; unread
// counts by phase those of a group's children that r lacks.
func writeDescription(w io.Writer, r *apiv1.Run, unread map[string]map[apiv1.Phase]int, events []apiv1.Event, allChildren bool) {
	fmt.Fprintf(w, "Run:       %s\nWorkflow:  %s\nPhase:     %s\n", r.ID, r.Name, r.Status.Phase)
	if r.Status.Message != "" {
		fmt.Fprintf(w, "Message:   %s\n", strings.TrimSpace(string(r.Status.Code)+" "+r.Status.Message))
	}
	fmt.Fprintf(w, "Source:    %s\n", r.Source)
	writeFederation(w, r.Federation)
	if r.RerunOf != nil {
		fmt.Fprintf(w, "Rerun of:  %s\n", rerunOfLine(r.RerunOf))
	}
	if r.WorkDir != "" {
		fmt.Fprintf(w, "WorkDir:   %s\n", r.WorkDir)
	}
	fmt.Fprintf(w, "Created:   %s\nDuration:  %s\n", r.CreatedAt.Local().Format("2006-01-02 15:04:05"),
		duration(r.Status.StartedAt, r.Status.FinishedAt))
	writeProgress(w, r.Status.Progress)
	if len(r.Params) > 0 {
		keys := make([]string, 0, len(r.Params))
		for k := range r.Params {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		fmt.Fprintln(w, "Params:")
		for _, k := range keys {
			fmt.Fprintf(w, "  %s=%s\n", k, r.Params[k])
		}
	}
	writeOutputs(w, r.Status.Outputs)
	fmt.Fprintln(w, "Tasks:")
	nt := newNodeTable(r, allChildren)
	nt.unread = unread
	nt.write(w)
	writeTrainStatus(w, r)
	writeTaskProgress(w, r)
	fmt.Fprintln(w, "Events:")
	for _, ev := range events {
		fmt.Fprintf(w, "  %s\n", eventLine(ev))
	}
}

// writeOutputs writes the workflow's outputs, once it has them:
// parameters as name=value, then artifacts as `artifact name=path`.
func writeOutputs(w io.Writer, o *apiv1.RunOutputs) {
	if o == nil || len(o.Parameters)+len(o.Artifacts) == 0 {
		return
	}
	fmt.Fprintln(w, "Outputs:")
	for _, k := range slices.Sorted(maps.Keys(o.Parameters)) {
		fmt.Fprintf(w, "  %s=%s\n", k, oneLine(o.Parameters[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(o.Artifacts)) {
		fmt.Fprintf(w, "  artifact %s=%s\n", k, oneLine(o.Artifacts[k]))
	}
}

func outputsLine(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + oneLine(m[k])
	}
	return strings.Join(parts, " ")
}

// gateLine says what a gate waits for, or how its wait ended:
// `approve, waiting since 2026-01-02 03:04:05, times out 2026-01-02 04:04:05: "ship it?"`
// or `approved by ann at 2026-01-02 03:14:00 ("looks good")`.
func gateLine(g *apiv1.GateStatus) string {
	var b strings.Builder
	if g.Decision != "" {
		b.WriteString(g.Decision)
		if g.Value != "" {
			b.WriteString(" " + quoteCut(g.Value))
		}
		if g.By != "" {
			b.WriteString(" by " + g.By)
		}
		if g.At != nil {
			b.WriteString(" at " + clock(*g.At))
		}
		if g.Reason != "" {
			b.WriteString(" (" + quoteCut(g.Reason) + ")")
		}
		return b.String()
	}
	b.WriteString(g.Kind)
	if g.Type != "" {
		b.WriteString(" (" + g.Type + ")")
	}
	if g.WaitingSince == nil {
		b.WriteString(", not waiting yet")
	} else {
		b.WriteString(", waiting since " + clock(*g.WaitingSince))
	}
	if g.WakeAt != nil {
		wake := ", times out "
		if g.Kind == "sleep" {
			wake = ", wakes "
		}
		b.WriteString(wake + clock(*g.WakeAt))
	}
	if g.NextLook != nil {
		b.WriteString(", looks again " + clock(*g.NextLook))
	}
	if g.Message != "" {
		b.WriteString(": " + quoteCut(g.Message))
	}
	return b.String()
}

// clock formats a time of a run's record as describe shows them.
func clock(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }

// quoteCut quotes s on one line, cut to its first 64 bytes.
func quoteCut(s string) string {
	if len(s) > 64 {
		return strconv.Quote(s[:64]) + "..."
	}
	return strconv.Quote(s)
}

// writeTaskProgress shows the last progress report ($KILN_PROGRESS) of
// the tasks that are not training jobs (those show theirs with their
// conditions).
func writeTaskProgress(w io.Writer, r *apiv1.Run) {
	for _, n := range r.Status.Nodes {
		if n.TrainerStatus != nil && len(n.Conditions) == 0 {
			fmt.Fprintf(w, "Progress of %s: %s\n", n.Name, trainerLine(n.TrainerStatus))
		}
	}
}

// writeTrainStatus shows the conditions and replica counts of training jobs.
func writeTrainStatus(w io.Writer, r *apiv1.Run) {
	for _, n := range r.Status.Nodes {
		if len(n.Conditions) == 0 {
			continue
		}
		fmt.Fprintf(w, "Training job %s:\n", n.Name)
		if rt := runtimeLine(r, n.Name); rt != "" {
			fmt.Fprintf(w, "  Runtime:  %s\n", rt)
		}
		if n.TrainerStatus != nil {
			fmt.Fprintf(w, "  Progress: %s\n", trainerLine(n.TrainerStatus))
		}
		if line := elasticLine(n.Attempts); line != "" {
			fmt.Fprintf(w, "  Nodes: %s\n", line)
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  CONDITION\tSTATUS\tREASON\tSINCE\tMESSAGE")
		for _, c := range n.Conditions {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, c.LastTransitionTime.Local().Format("15:04:05"), oneLine(c.Message))
		}
		fmt.Fprintln(tw, "  REPLICAS\tPENDING\tACTIVE\tSUCCEEDED\tFAILED\tSTOPPED")
		for _, g := range n.Replicas {
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\n", g.Name, g.Pending, g.Active, g.Succeeded, g.Failed, g.Stopped)
		}
		tw.Flush()
	}
}

// elasticLine gives an elastic training job's size in its last attempt:
// the nodes it has now, how many it started on, how many joined and
// those it lost; "" for a job of fixed size.
func elasticLine(attempts []apiv1.AttemptStatus) string {
	if len(attempts) == 0 || attempts[len(attempts)-1].Nodes == 0 {
		return ""
	}
	a := attempts[len(attempts)-1]
	line := fmt.Sprintf("%d now", a.Nodes+a.Joined-len(a.Dropped))
	notes := []string{fmt.Sprintf("started on %d", a.Nodes)}
	if a.Joined > 0 {
		notes = append(notes, fmt.Sprintf("%d joined", a.Joined))
	}
	if len(a.Dropped) > 0 {
		notes = append(notes, "lost "+strings.Join(a.Dropped, ", "))
	}
	if len(notes) > 0 {
		line += " (" + strings.Join(notes, "; ") + ")"
	}
	return line
}
