package e2e

// The invariants of TestLifecycleModel: what must hold of a run after
// every step (check) and at the end of each stretch of its life (sawEnd).

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// stopSlack is how long after a cancel or a suspend was sent an attempt
// may still start when no event says when the engine took the request:
// an engine learns of another process's requests as it renews its
// leases, every second.
const stopSlack = 3 * time.Second

// ledgerEntry is one line of the ledger: a node's attempt started.
type ledgerEntry struct {
	node    string
	attempt int
}

// readLedger reads the lines "<run> <node> <attempt>" of path, by run.
func readLedger(path string) (map[apiv1.RunID][]ledgerEntry, error) {
	out := map[apiv1.RunID][]ledgerEntry{}
	for _, line := range fileLines(path) {
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, violated("ledger", "ledger line %q is not <run> <node> <attempt>", line)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, violated("ledger", "ledger line %q: %v", line, err)
		}
		out[apiv1.RunID(f[0])] = append(out[apiv1.RunID(f[0])], ledgerEntry{f[1], n})
	}
	return out, nil
}

// fileLines returns the complete lines of path (none if it is missing).
func fileLines(path string) []string {
	b, _ := os.ReadFile(path)
	s := string(b)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.Split(s[:i], "\n")
	}
	return nil
}

// check checks the run as it is now: every attempt the ledger shows is
// recorded, once; and, once the run ended, nothing of it runs and its
// progress agrees with its nodes.
func (d *driver) check(r *runModel) error {
	ledger, err := readLedger(d.p.ledger) // before describing: attempts are recorded before they start
	if err != nil {
		return err
	}
	run, err := d.describeRun(r.id)
	if err != nil {
		return err
	}
	if err := checkRunLedger(run, ledger[r.id]); err != nil {
		return err
	}
	if !run.Status.Phase.Done() {
		return nil
	}
	if err := checkSettled(run); err != nil {
		return err
	}
	return checkProgress(run)
}

// checkRunLedger checks that each started attempt is one the run records,
// and that none started twice.
func checkRunLedger(run apiv1.Run, entries []ledgerEntry) error {
	seen := map[ledgerEntry]bool{}
	for _, e := range entries {
		if seen[e] {
			return violated("ledger-twice", "attempt %d of %s started twice", e.attempt, e.node)
		}
		seen[e] = true
		n := run.Status.Node(e.node)
		if n == nil {
			return violated("ledger-unrecorded", "attempt %d of %s started, and the run has no node %s", e.attempt, e.node, e.node)
		}
		if !slices.ContainsFunc(n.Attempts, func(a apiv1.AttemptStatus) bool { return a.Number == e.attempt }) {
			return violated("ledger-unrecorded", "attempt %d of %s started; the node records %s", e.attempt, e.node, attemptsText(n))
		}
	}
	return nil
}

// attemptsText lists a node's attempts: number and phase.
func attemptsText(n *apiv1.NodeStatus) string {
	var parts []string
	for _, a := range n.Attempts {
		parts = append(parts, fmt.Sprintf("%d:%s", a.Number, a.Phase))
	}
	return fmt.Sprintf("%s with attempts [%s]", n.Phase, strings.Join(parts, " "))
}

// checkSettled checks that nothing of an ended run is left running or
// unfinished.
func checkSettled(run apiv1.Run) error {
	for _, n := range run.Status.Nodes {
		for _, a := range n.Attempts {
			if a.Phase == apiv1.PhaseRunning {
				return violated("running-after-end", "run %s is %s, and attempt %d of %s is Running", run.ID, run.Status.Phase, a.Number, n.Name)
			}
		}
		if !n.Phase.Done() {
			return violated("unfinished-after-end", "run %s is %s, and node %s is %s", run.ID, run.Status.Phase, n.Name, n.Phase)
		}
	}
	return nil
}

// checkProgress checks that the run's saved progress counts its nodes:
// every node that did not expand into children.
func checkProgress(run apiv1.Run) error {
	if run.Status.Progress == nil {
		return violated("progress", "run %s ended with no progress", run.ID)
	}
	var want apiv1.RunProgress
	for _, n := range run.Status.Nodes {
		if n.Children == nil {
			want.Add(n.Phase, 1)
		}
	}
	if got := *run.Status.Progress; got != want {
		return violated("progress", "run %s is %s with progress %+v; its nodes count %+v", run.ID, run.Status.Phase, got, want)
	}
	return nil
}

// sawEnd notes that the run's current epoch ended as run shows, and
// checks the end: its phase is one the model allows, the exit handler
// ran once (or, on a cancel, at most once), the engine exited with the
// run's result, and nothing started after an accepted cancel.
func (d *driver) sawEnd(r *runModel, run apiv1.Run) error {
	e := r.last()
	if e.end != "" {
		return nil
	}
	e.end = run.Status.Phase
	d.note("run %s ended %s: %s", r.id, e.end, run.Status.Message)
	if want := d.expected(e); !slices.Contains(want, e.end) {
		return violated("outcome", "run %s (%s) ended %s: %s; want one of %v", r.id, e.by, e.end, run.Status.Message, want)
	}
	if err := d.checkExits(r); err != nil {
		return err
	}
	if err := d.checkEngineExit(r); err != nil {
		return err
	}
	now := time.Now()
	if e.cancelled {
		if err := d.checkNoStart(r, "cancel", e.cancelSent, now, false); err != nil {
			return err
		}
	}
	if r.suspended {
		// A retry drops the suspension: see retry.
		if err := d.checkNoStart(r, "suspend", r.suspendSent, now, e.stopped); err != nil {
			return err
		}
		r.suspendSent = now
	}
	return d.check(r)
}

// expected lists the phases the epoch may end in.
func (d *driver) expected(e *epoch) []apiv1.Phase {
	var want []apiv1.Phase
	switch {
	case e.rejected:
		want = []apiv1.Phase{apiv1.PhaseFailed}
	case e.fixed:
		want = []apiv1.Phase{apiv1.PhaseSucceeded}
	default:
		want = d.sc.wf.unfixedOutcome()
	}
	if e.cancelled {
		// A cancel accepted as the run was ending may find it ended.
		want = append(want, apiv1.PhaseCancelled)
	}
	if e.stopped {
		want = append(want, apiv1.PhaseFailed) // or it had ended as it would have
	}
	return want
}

// unfixedOutcome lists the phases a first run of the workflow, before
// any fix, may end in.
func (w genWorkflow) unfixedOutcome() []apiv1.Phase {
	var certain, maybe bool
	for _, nd := range w.Nodes {
		c, m := nd.fails()
		certain, maybe = certain || c, maybe || m
	}
	switch {
	case certain:
		return []apiv1.Phase{apiv1.PhaseFailed}
	case maybe:
		return []apiv1.Phase{apiv1.PhaseSucceeded, apiv1.PhaseFailed}
	}
	return []apiv1.Phase{apiv1.PhaseSucceeded}
}

// checkExits checks the lines the exit handler wrote for the run since
// its previous end: one, with the run's result, after an end that was
// not a cancel; at most one after a cancel.
func (d *driver) checkExits(r *runModel) error {
	if !d.sc.wf.OnExit {
		return nil
	}
	var mine []string
	for _, line := range fileLines(d.p.exits) {
		if f := strings.Fields(line); len(f) == 3 && f[0] == string(r.id) {
			mine = append(mine, f[1])
		}
	}
	e, got := r.last(), mine[min(r.exitsSeen, len(mine)):]
	r.exitsSeen = len(mine)
	switch {
	case e.end == apiv1.PhaseCancelled && len(got) <= 1:
		return nil
	case e.end == apiv1.PhaseCancelled:
		return violated("exit-handler", "run %s ended Cancelled (%s) and its exit handler ran %d times: %v", r.id, e.by, len(got), got)
	case len(got) != 1:
		return violated("exit-handler", "run %s ended %s (end %d, %s) and its exit handler ran %d times since the previous end, want once", r.id, e.end, len(r.epochs), e.by, len(got))
	case got[0] != string(e.end):
		return violated("exit-handler", "run %s ended %s, and its exit handler saw workflow.status %s", r.id, e.end, got[0])
	}
	return nil
}

// checkEngineExit checks that the engine that drove the run to its end
// (unless it was killed) exits, 0 exactly when the run succeeded.
func (d *driver) checkEngineExit(r *runModel) error {
	e := r.eng
	if e == nil {
		return nil
	}
	select {
	case <-e.done:
	case <-time.After(modelDeadline):
		return violated("engine", "kiln %s has not exited %s after run %s ended", e.what, modelDeadline, r.id)
	}
	if e.killed {
		return nil
	}
	if end := r.last().end; (e.code == 0) != (end == apiv1.PhaseSucceeded) {
		return violated("engine-exit", "kiln %s exited %d and the run ended %s: %s", e.what, e.code, end, e.output())
	}
	return nil
}

// runDetail is what kiln describe run -o json prints: the run and its events.
type runDetail struct {
	apiv1.Run
	Events []apiv1.Event `json:"events"`
}

// takenAt is when the engine took a request of what ("cancel",
// "suspend") sent at sent: the time of the event it logged then; zero
// when there is none.
func takenAt(detail runDetail, what string, sent time.Time) time.Time {
	for _, ev := range detail.Events {
		took := ev.Node == "" && !strings.HasSuffix(ev.Reason, "Requested") && (what == "cancel" && ev.Phase == apiv1.PhaseCancelling ||
			what == "suspend" && ev.Reason == "SuspendStarted")
		if took && ev.Time.After(sent) {
			return ev.Time
		}
	}
	return time.Time{}
}

// checkNoStart checks that the engine started no attempt of the run
// between when it took what (a cancel, a suspend) sent at sent, and to;
// when no event says when it took it, between sent plus stopSlack and to.
// An attempt's start is the engine's decision (its "Started" event): a
// launch decided before the cancel forks its processes a moment later,
// and the cancel then stops them. With stopped, the exit handler's
// attempts are left out: a stop runs the exit handler, suspended or not.
func (d *driver) checkNoStart(r *runModel, what string, sent, to time.Time, stopped bool) error {
	detail, err := d.describeDetail(r.id)
	if err != nil {
		return err
	}
	from, how := takenAt(detail, what, sent), "the engine took the "+what
	if from.IsZero() {
		from, how = sent.Add(stopSlack), fmt.Sprintf("%s after the %s was sent (no event says when the engine took it)", stopSlack, what)
	}
	for _, n := range detail.Status.Nodes {
		if stopped && (n.Name == "onExit" || strings.HasPrefix(n.Name, "onExit.")) {
			continue
		}
		for _, a := range n.Attempts {
			if s := decidedAt(detail, n.Name, a); s != nil && s.After(from) && s.Before(to) {
				return violated(what+"-start", "attempt %d of %s started %s after %s",
					a.Number, n.Name, s.Sub(from).Round(time.Millisecond), how)
			}
		}
	}
	return nil
}

// decidedAt is when the engine started attempt a of node: its Started
// event, else the attempt's own record.
func decidedAt(detail runDetail, node string, a apiv1.AttemptStatus) *time.Time {
	for _, ev := range detail.Events {
		if ev.Node == node && ev.Attempt == a.Number && ev.Reason == "Started" {
			t := ev.Time
			return &t
		}
	}
	return a.StartedAt
}
