package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// maxTableRows bounds the live table; larger runs show counts and the
// tasks that are not simply pending or done.
const maxTableRows = 30

// watcher shows runs while they go: a live table on a terminal, one line
// per event otherwise, and a summary at the end. It reads through the
// engine, and listens to it when it runs in this process.
type watcher struct {
	e       *env
	runs    reader
	local   watchable       // nil when the engine is a server
	changes <-chan struct{} // news, when the engine is in this process
	quiet   bool
	tty     bool
	seq     map[apiv1.RunID]int64
	drawn   int // lines of the table on screen
}

func newWatcher(e *env, eng engine, quiet bool) (*watcher, func()) {
	tty := false
	if f, ok := e.stdout.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	w := &watcher{e: e, runs: eng, quiet: quiet, tty: tty, seq: map[apiv1.RunID]int64{}}
	stop := func() {}
	if l, ok := eng.(watchable); ok {
		w.local = l
		w.changes, stop = l.Changes()
	}
	return w, stop
}

// settled reports whether run id needs no more watching from here: it
// ended, or (in this process) another engine took it over.
// A server lost for good (an exitError) is the one error it returns;
// other failures to read are tried again on the next look.
func (w *watcher) settled(ctx context.Context, id apiv1.RunID) (bool, error) {
	if w.local != nil {
		select {
		case <-w.local.Done(id):
			return true, nil
		default:
			return false, nil
		}
	}
	run, err := w.runs.GetRun(ctx, id)
	if ee := (*exitError)(nil); errors.As(err, &ee) {
		return false, err
	}
	return err == nil && run.Status.Phase.Done(), nil
}

// watch returns when every run has ended (or ctx ends) and reports
// whether all of them succeeded. Through a server, it waits up to
// serverPatience for a server that stops answering (see patientReader).
func (w *watcher) watch(ctx context.Context, ids []apiv1.RunID) (bool, error) {
	if _, ok := w.runs.(*patientReader); !ok && w.local == nil && w.e.server != "" {
		w.runs = patient(w.e, w.runs, ids) // a server that restarts is waited for
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := w.show(ctx, ids); err != nil {
			if ctx.Err() != nil {
				return false, nil // the user left
			}
			return false, err
		}
		done, err := w.allSettled(ctx, ids)
		if err != nil {
			return false, err
		}
		if done {
			break
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-w.changes:
		case <-tick.C:
		}
	}
	if err := w.show(ctx, ids); err != nil {
		return false, err
	}
	return w.summarize(ctx, ids)
}

func (w *watcher) allSettled(ctx context.Context, ids []apiv1.RunID) (bool, error) {
	for _, id := range ids {
		if done, err := w.settled(ctx, id); !done || err != nil {
			return false, err
		}
	}
	return true, nil
}

func (w *watcher) show(ctx context.Context, ids []apiv1.RunID) error {
	switch {
	case w.quiet:
		return nil
	case w.tty:
		return w.drawTable(ctx, ids)
	}
	return w.printEvents(ctx, ids)
}

func (w *watcher) printEvents(ctx context.Context, ids []apiv1.RunID) error {
	for _, id := range ids {
		events, err := w.runs.Events(ctx, id, w.seq[id])
		if err != nil {
			return err
		}
		for _, ev := range events {
			w.seq[id] = ev.Seq
			fmt.Fprintln(w.e.stdout, eventLine(ev))
		}
	}
	return nil
}

func eventLine(ev apiv1.Event) string {
	node := ev.Node
	if node == "" {
		node = "-"
	}
	parts := []string{ev.Time.Local().Format("15:04:05.000"), string(ev.Run), node, string(ev.Phase)}
	if ev.Code != "" {
		parts = append(parts, string(ev.Code))
	}
	if ev.Message != "" {
		parts = append(parts, ev.Message)
	}
	return strings.Join(parts, " ")
}

// drawTable draws the live table of runs ids over the one drawn before:
// up to its first line, clear to the end of the screen, draw. Every line
// fits the terminal's width and the table its height, read afresh each
// time, so no line wraps and the cursor never has to climb past the top
// of the screen: nothing of an earlier table stays behind.
func (w *watcher) drawTable(ctx context.Context, ids []apiv1.RunID) error {
	size := w.size()
	var lines []string
	for _, id := range ids {
		run, err := w.runs.GetRun(ctx, id)
		if err != nil {
			return err
		}
		lines = append(lines, liveTable(run, size.cols, tableRows(size.rows, len(ids)))...)
	}
	if size.rows > 1 && len(lines) > size.rows-1 {
		lines = lines[:size.rows-1]
	}
	var b strings.Builder
	if w.drawn > 0 {
		fmt.Fprintf(&b, "\r\x1b[%dA", w.drawn)
	}
	b.WriteString("\x1b[J")
	for _, l := range lines {
		b.WriteString(l)
		b.WriteString("\n")
	}
	fmt.Fprint(w.e.stdout, b.String())
	w.drawn = len(lines)
	return nil
}

// size is the terminal's size now, or zero when it cannot be read.
func (w *watcher) size() screen {
	f, ok := w.e.stdout.(*os.File)
	if !ok {
		return screen{}
	}
	cols, rows, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return screen{}
	}
	return screen{cols: cols, rows: rows}
}

// writeRunTable writes run's live table with no bound on its width.
func writeRunTable(b *strings.Builder, run *apiv1.Run) {
	for _, l := range liveTable(run, 0, maxTableRows) {
		b.WriteString(l)
		b.WriteString("\n")
	}
}

func phaseCounts(nodes []apiv1.NodeStatus) string {
	counts := map[apiv1.Phase]int{}
	for _, n := range nodes {
		counts[n.Phase]++
	}
	var parts []string
	for _, p := range []apiv1.Phase{
		apiv1.PhasePending, apiv1.PhaseWaiting, apiv1.PhaseRunning, apiv1.PhaseRetrying, apiv1.PhaseSuspended,
		apiv1.PhaseSucceeded, apiv1.PhaseFailed, apiv1.PhaseCancelled, apiv1.PhaseSkipped,
	} {
		if counts[p] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[p], p))
		}
	}
	return fmt.Sprintf("%d tasks: %s", len(nodes), strings.Join(parts, ", "))
}

// interesting keeps up to limit nodes that are running, retrying, waiting or failed.
func interesting(nodes []apiv1.NodeStatus, limit int) []apiv1.NodeStatus {
	var out []apiv1.NodeStatus
	for _, n := range nodes {
		switch n.Phase {
		case apiv1.PhaseRunning, apiv1.PhaseRetrying, apiv1.PhaseFailed, apiv1.PhaseWaiting:
			out = append(out, n)
		}
		if len(out) == limit {
			break
		}
	}
	return out
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 100 {
		return s[:97] + "..."
	}
	return s
}

// summarize prints how each run ended and reports whether all succeeded.
// It reads each run's head, and the nodes of one that failed only: they
// are all the summary names, where a run of 100,000 nodes was read whole
// for one line.
func (w *watcher) summarize(ctx context.Context, ids []apiv1.RunID) (bool, error) {
	ok := true
	for _, id := range ids {
		run, err := w.runs.GetRunHead(ctx, id)
		if err != nil {
			return false, err
		}
		if run.Status.Phase.Done() && run.Status.Phase != apiv1.PhaseSucceeded {
			if run.Status.Nodes, err = w.failedNodes(ctx, id); err != nil {
				return false, err
			}
		}
		ok = printSummary(w.e, run) && ok
	}
	return ok, nil
}

// failedNodes are run id's failed nodes, in the run's order, with their
// attempts, read a page at a time.
func (w *watcher) failedNodes(ctx context.Context, id apiv1.RunID) ([]apiv1.NodeStatus, error) {
	return allNodes(ctx, w.runs, id, apiv1.NodeQuery{Phases: []apiv1.Phase{apiv1.PhaseFailed}})
}

// printOutputs prints a run's outputs, one per line, names sorted.
func printOutputs(e *env, o *apiv1.RunOutputs) {
	if o == nil {
		return
	}
	for _, kind := range []struct {
		name   string
		values map[string]string
	}{{"output", o.Parameters}, {"artifact", o.Artifacts}} {
		for _, k := range slices.Sorted(maps.Keys(kind.values)) {
			fmt.Fprintf(e.stdout, "  %s %s=%s\n", kind.name, k, kind.values[k])
		}
	}
}

func printSummary(e *env, run *apiv1.Run) bool {
	took := duration(run.Status.StartedAt, run.Status.FinishedAt)
	if run.Status.Phase == apiv1.PhaseSucceeded {
		fmt.Fprintf(e.stdout, "Run %s Succeeded in %s: %s\n", run.ID, took, run.Status.Message)
		printOutputs(e, run.Status.Outputs)
		return true
	}
	if !run.Status.Phase.Done() {
		fmt.Fprintf(e.stderr, "Run %s is %s and now worked by another engine\n", run.ID, run.Status.Phase)
		return false
	}
	when := "after " + took
	if run.Status.StartedAt == nil {
		when = "before any task started"
	}
	fmt.Fprintf(e.stderr, "Run %s %s %s: %s %s\n", run.ID, run.Status.Phase, when, run.Status.Code, run.Status.Message)
	phase := map[string]apiv1.Phase{} // of the failed nodes at least: summarize reads no other
	for _, n := range run.Status.Nodes {
		phase[n.Name] = n.Phase
	}
	for _, n := range run.Status.Nodes {
		if n.Phase != apiv1.PhaseFailed || (n.Parent != "" && phase[n.Parent] != apiv1.PhaseFailed) {
			continue // a child's failure its group tolerated (a map's success policy) is not the run's
		}
		fmt.Fprintf(e.stderr, "  task %s failed (%s): %s\n", n.Name, n.Code, n.Message)
		if len(n.Attempts) > 0 && n.Attempts[len(n.Attempts)-1].StartedAt != nil {
			fmt.Fprintf(e.stderr, "    logs: kiln logs %s %s\n", run.ID, n.Name)
		}
	}
	return false
}
