package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// runListFlags are kiln get runs' filters and format.
type runListFlags struct {
	output, phase, project, label, since, until, search string
	limit                                               int
	watch, ascending                                    bool
}

func newGetRunsCmd(e *env) *cobra.Command {
	var f runListFlags
	runs := &cobra.Command{
		Use:     "runs [ID]",
		Aliases: []string{"run"},
		Short:   "List runs, newest first, or show one",
		Long: "List runs, newest first, filtered by phase (several: --phase failed,cancelled), time (--since 2h),\n" +
			"project, label and a search of IDs and names; or, given an ID, show that run in the same table.\n" +
			"-w prints the table, then a line for each run that appears or changes, until Ctrl-C.",
		Args:              between(0, 1, "kiln get runs takes at most one run ID; filter with --phase, --since, --search"),
		ValidArgsFunction: completeRuns(e),
		RunE: func(cmd *cobra.Command, args []string) error {
			q, err := f.query(time.Now())
			if err != nil {
				return err
			}
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			list, err := f.list(cmd.Context(), eng, q, args)
			if err != nil {
				return err
			}
			if len(args) == 1 && f.output != "name" {
				// one run prints as itself, as kubectl get pod NAME -o json does
				if done, err := printObject(e.stdout, f.output, list[0]); done {
					return err
				}
			}
			if !f.watch && len(list) == 0 && isTable(f.output) {
				// As kubectl: nothing on standard output, a word on standard error.
				fmt.Fprintln(e.stderr, "No runs found.")
				return nil
			}
			if !f.watch {
				return printRuns(e.stdout, f.output, list)
			}
			return watchRunList(cmd.Context(), e.stdout, f, list, func(ctx context.Context) ([]*apiv1.Run, error) {
				return f.list(ctx, eng, q, args)
			})
		},
	}
	fl := runs.Flags()
	fl.StringVarP(&f.output, "output", "o", "", "output format: table, wide (project, labels, task counts), json, yaml, name (the run IDs alone, one a line) or jsonpath='{.items[*].id}'")
	fl.StringVar(&f.phase, "phase", "", "only runs in these phases, in any case, comma separated: failed,cancelled")
	fl.IntVar(&f.limit, "limit", 50, "at most this many runs")
	fl.StringVar(&f.project, "project", "", "only runs of this project (default: every project the token may read)")
	fl.StringVarP(&f.label, "selector", "l", "", "only runs this label selector selects, as kubectl's: key, !key, key=value, key!=value, key in (a,b), key notin (a,b), comma-joined (a schedule's runs: -l kiln.dev/schedule=NAME)")
	fl.StringVar(&f.since, "since", "", "only runs created since then: a duration ago (2h, 30m) or an RFC 3339 time")
	fl.StringVar(&f.until, "until", "", "only runs created before then: a duration ago or an RFC 3339 time")
	fl.StringVar(&f.search, "search", "", "only runs whose ID or workflow name holds this text, in any case")
	fl.BoolVar(&f.ascending, "ascending", false, "oldest first")
	fl.BoolVarP(&f.watch, "watch", "w", false, "after the table, print a line for each run that appears or changes (polls each second)")
	return runs
}

// query checks the flags and turns them into the list's query; a bad
// value is a usage error naming the flag.
func (f *runListFlags) query(now time.Time) (apiv1.RunQuery, error) {
	q := apiv1.RunQuery{Limit: f.limit, Project: f.project, Label: f.label, Search: f.search, Ascending: f.ascending}
	if f.limit < 1 || f.limit > apiv1.MaxRunPage {
		return q, limitError(f.limit)
	}
	var err error
	if q.Phases, err = apiv1.ParsePhases(f.phase); err != nil {
		return q, asFlag(err, "--phase")
	}
	for _, t := range []struct {
		flag, v string
		dst     *time.Time
	}{{"since", f.since, &q.Since}, {"until", f.until, &q.Until}} {
		if t.v == "" {
			continue
		}
		if *t.dst, err = apiv1.ParseTimeAgo(t.flag, t.v, now); err != nil {
			return q, asFlag(err, "--"+t.flag)
		}
	}
	if _, err := store.ParseSelector(f.label); err != nil {
		return q, asUsage(err, "--selector")
	}
	if f.output != "" && f.watch && (f.output != "wide" && f.output != "table") {
		return q, usagef("-w prints tables: -o %s does not go with it", f.output)
	}
	return q, nil
}

// list is the page the flags ask for, or the one run args names.
func (f *runListFlags) list(ctx context.Context, eng engine, q apiv1.RunQuery, args []string) ([]*apiv1.Run, error) {
	if len(args) == 1 {
		run, err := eng.GetRun(ctx, apiv1.RunID(args[0]))
		if err != nil {
			return nil, err
		}
		return []*apiv1.Run{run}, nil
	}
	page, err := eng.ListRuns(ctx, q)
	if err != nil {
		return nil, err
	}
	return page.Items, nil
}

// printRuns prints runs in format: a table, wide, name, or a document.
func printRuns(w io.Writer, format string, list []*apiv1.Run) error {
	if format == "name" { // one ID a line, for scripts: kiln get runs -o name | xargs ...
		for _, r := range list {
			fmt.Fprintln(w, r.ID)
		}
		return nil
	}
	if done, err := printList(w, format, "Run", list); done {
		return err
	}
	t := runTable(format == "wide")
	for _, r := range list {
		t.add(runRow(r, format == "wide"))
	}
	return t.write(w)
}

// runColumns are the heads of the runs table, and of its wide form.
var (
	runColumns     = []string{"ID", "NAME", "PHASE", "PROGRESS", "AGE", "DURATION", "MESSAGE"}
	runWideColumns = []string{"ID", "NAME", "PROJECT", "PHASE", "PROGRESS", "TASKS", "AGE", "DURATION", "LABELS", "MESSAGE"}
)

func runTable(wide bool) *grid {
	if wide {
		return newGrid(runWideColumns)
	}
	return newGrid(runColumns)
}

// runRow is one run's cells, in runColumns (or runWideColumns) order.
func runRow(r *apiv1.Run, wide bool) []string {
	took := duration(r.Status.StartedAt, r.Status.FinishedAt)
	if !wide {
		return []string{string(r.ID), runName(r), string(r.Status.Phase), progressCell(r.Status.Progress), age(r.CreatedAt), took, oneLine(r.Status.Message)}
	}
	return []string{
		string(r.ID), runName(r), orDash(r.Project), string(r.Status.Phase), progressCell(r.Status.Progress),
		taskCounts(r.Status.Progress), age(r.CreatedAt), took, labelList(r.Labels), oneLine(r.Status.Message),
	}
}

// taskCounts says how many of a run's tasks are running, succeeded,
// failed, skipped and cancelled: "2 running, 5 succeeded, 1 failed".
func taskCounts(p *apiv1.RunProgress) string {
	if p == nil {
		return "-"
	}
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{p.Running, "running"}, {p.Succeeded, "succeeded"}, {p.Failed, "failed"}, {p.Skipped, "skipped"}, {p.Cancelled, "cancelled"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// labelList is k=v,k=v with keys sorted, or "-".
func labelList(labels map[string]string) string {
	if len(labels) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// isTable reports whether format prints a table (no -o, table, wide).
func isTable(format string) bool { return format == "" || format == fmtTable || format == fmtWide }

// writeRuns writes get runs' table of runs.
func writeRuns(w io.Writer, list []*apiv1.Run) error { return printRuns(w, "", list) }
