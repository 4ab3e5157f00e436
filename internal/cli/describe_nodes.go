package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// A group with more than foldAbove children is folded in describe unless
// --children is given: it lists at most foldListMax of its children that
// neither succeeded nor wait to start, and counts the rest on one line.
const (
	foldAbove   = 10
	foldListMax = 20
)

// nodeTable writes the Tasks table of describe: each node with its
// attempts, and the children of a map, dynamic, subworkflow or exit node
// right under it, indented two spaces a level. Names are full node names,
// as kiln logs takes them.
type nodeTable struct {
	run         apiv1.RunID
	allChildren bool
	// fed is the run's federation, if it has one.
	fed *apiv1.FederationInfo
	// children holds the nodes under each node name; "" holds the top.
	children map[string][]*apiv1.NodeStatus
	// unread counts by phase the children of a group that were not read
	// (describe reads a folded group's children that it lists, and counts
	// the others): they are folded with those not listed.
	unread map[string]map[apiv1.Phase]int
	t      table
}

// newNodeTable sorts the run's nodes under their parents. A child comes
// after its parent in the run's status; one whose parent is not found
// before it is shown at the top, so that nothing is lost.
func newNodeTable(r *apiv1.Run, allChildren bool) *nodeTable {
	nt := &nodeTable{run: r.ID, allChildren: allChildren, fed: r.Federation, children: map[string][]*apiv1.NodeStatus{}}
	seen := make(map[string]bool, len(r.Status.Nodes))
	for i := range r.Status.Nodes {
		n := &r.Status.Nodes[i]
		parent := n.Parent
		if !seen[parent] {
			parent = ""
		}
		seen[n.Name] = true
		nt.children[parent] = append(nt.children[parent], n)
	}
	return nt
}

func (nt *nodeTable) write(w io.Writer) {
	nt.t.row("TASK", "PHASE", "ATTEMPT", "EXIT", "DURATION", "CODE", "MESSAGE")
	for _, n := range nt.children[""] {
		nt.node(n, 0)
	}
	nt.t.write(w, "  ")
}

// node adds n at depth, its attempts, outputs and gate, then its children.
func (nt *nodeTable) node(n *apiv1.NodeStatus, depth int) {
	nt.t.row(strings.Repeat("  ", depth)+n.Name, string(n.Phase), "", "", duration(n.StartedAt, n.FinishedAt), string(n.Code), nodeMessage(n))
	for _, at := range n.Attempts {
		exit := "-"
		switch {
		case at.ExitCode != nil:
			exit = strconv.Itoa(*at.ExitCode)
		case at.Signal != "":
			exit = at.Signal
		}
		msg := oneLine(at.Message)
		if at.System {
			msg = "(system) " + msg
		}
		if lost := logsLostNote(at.LogsLost); lost != "" {
			msg = strings.TrimSpace(msg + " " + lost)
		}
		nt.t.row("", string(at.Phase), "#"+strconv.Itoa(at.Number), exit, duration(at.StartedAt, at.FinishedAt), string(at.Code), msg)
	}
	nt.shares(n, depth)
	if s := shareOf(nt.fed, n.Name); s != "" {
		nt.t.row("", "", "", "", "", "", s)
	}
	if r := n.Reused; r != nil {
		line := fmt.Sprintf("reused: run %s, task %s", r.Run, r.Node)
		if r.Attempt > 0 {
			line += fmt.Sprintf(", attempt #%d", r.Attempt)
		}
		nt.t.row("", "", "", "", "", "", line)
	}
	if c := n.Cache; c != nil {
		nt.t.row("", "", "", "", "", "", "cache: "+cacheLine(c))
	}
	if len(n.Outputs) > 0 {
		nt.t.row("", "", "", "", "", "", "outputs: "+outputsLine(n.Outputs))
	}
	if n.Gate != nil {
		label := "gate: "
		if n.Kind == apiv1.NodeKindSensor {
			label = "sensor: "
		}
		nt.t.row("", "", "", "", "", "", label+gateLine(n.Gate))
	}
	nt.childrenOf(n, depth+1)
}

// logsLostNote says which logs of an attempt lost bytes, "(logs lost:
// stdout 1200 bytes, stderr 5 bytes)", or nothing.
func logsLostNote(lost map[string]int64) string {
	if len(lost) == 0 {
		return ""
	}
	parts := make([]string, 0, len(lost))
	for _, name := range slices.Sorted(maps.Keys(lost)) {
		parts = append(parts, fmt.Sprintf("%s %d bytes", name, lost[name]))
	}
	return "(" + string(apiv1.CodeLogsLost) + " logs lost: " + strings.Join(parts, ", ") + ")"
}

// childrenOf adds the children of n at depth, folded when there are many.
func (nt *nodeTable) childrenOf(n *apiv1.NodeStatus, depth int) {
	kids := nt.children[n.Name]
	unread := nt.unreadOf(n.Name)
	if nt.allChildren || len(kids)+len(unread) <= foldAbove {
		for _, k := range kids {
			nt.node(k, depth)
		}
		return
	}
	hidden := unread
	listed := 0
	for _, k := range kids {
		if listed == foldListMax || !worthListing(k.Phase) {
			hidden = append(hidden, k.Phase)
			continue
		}
		nt.node(k, depth)
		listed++
	}
	if len(hidden) > 0 {
		nt.t.note(fmt.Sprintf("%s… %s; kiln describe run %s --children lists all", strings.Repeat("  ", depth), moreLine(hidden), nt.run))
	}
}

// unreadOf lists the phases of the children of group that were not read,
// one entry a child, in the order of apiv1.NodePhases.
func (nt *nodeTable) unreadOf(group string) []apiv1.Phase {
	var out []apiv1.Phase
	for _, p := range apiv1.NodePhases() {
		for range nt.unread[group][p] {
			out = append(out, p)
		}
	}
	return out
}

// worthListing reports whether a child of a folded group is listed: one
// that runs, or ended other than well. Those that succeeded, wait to
// start or were skipped are only counted.
func worthListing(p apiv1.Phase) bool {
	switch p {
	case apiv1.PhaseSucceeded, apiv1.PhasePending, apiv1.PhaseWaiting, apiv1.PhaseSkipped:
		return false
	}
	return true
}

// moreLine counts the children a folded group does not list, by phase:
// `196 more succeeded` or `9990 more: 12 succeeded, 9978 pending`.
func moreLine(hidden []apiv1.Phase) string {
	counts := map[apiv1.Phase]int{}
	var order []apiv1.Phase
	for _, p := range hidden {
		if counts[p] == 0 {
			order = append(order, p)
		}
		counts[p]++
	}
	total := strconv.Itoa(len(hidden)) + " more"
	if len(order) == 1 {
		return total + " " + strings.ToLower(string(order[0]))
	}
	parts := make([]string, len(order))
	for i, p := range order {
		parts[i] = strconv.Itoa(counts[p]) + " " + strings.ToLower(string(p))
	}
	return total + ": " + strings.Join(parts, ", ")
}

// nodeMessage is the MESSAGE cell of n. A group shows its children's
// counts, and its message only where that says more than they do: why it
// failed, was cancelled or skipped.
func nodeMessage(n *apiv1.NodeStatus) string {
	if n.Children == nil {
		return oneLine(n.Message)
	}
	s := childCounts(*n.Children)
	if n.Message != "" && n.Phase != apiv1.PhaseSucceeded && n.Phase != apiv1.PhaseRunning {
		s += "; " + oneLine(n.Message)
	}
	return s
}

// childCounts is `7/10 succeeded, 2 failed, 1 running`: how many of a
// group's children succeeded, then the phases of the others.
func childCounts(c apiv1.ChildCounts) string {
	s := fmt.Sprintf("%d/%d succeeded", c.Succeeded, c.Total)
	for _, o := range []struct {
		n    int
		word string
	}{{c.Failed, "failed"}, {c.Running, "running"}, {c.Pending, "pending"}, {c.Skipped, "skipped"}, {c.Cancelled, "cancelled"}} {
		if o.n > 0 {
			s += fmt.Sprintf(", %d %s", o.n, o.word)
		}
	}
	return s
}

// table lays out rows in columns two spaces apart, as tabwriter does,
// except that a note (a row of one cell) does not widen the first
// column, and trailing blanks are cut.
type table struct {
	rows [][]string
}

func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) note(s string) { t.rows = append(t.rows, []string{s}) }

// write writes the rows, each after indent.
func (t *table) write(w io.Writer, indent string) {
	var widths []int
	for _, r := range t.rows {
		for i := 0; len(r) > 1 && i < len(r)-1; i++ {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		b.Reset()
		b.WriteString(indent)
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// cacheLine says what the cache did for a node: its result, its key, where
// a reused result came from and why a stored one was not used.
func cacheLine(c *apiv1.CacheStatus) string {
	s := c.Result
	if c.Key != "" {
		s += ", key " + shortKey(c.Key)
	}
	if c.SourceRun != "" {
		s += fmt.Sprintf(", computed by run %s (task %s)", c.SourceRun, c.SourceNode)
	}
	switch {
	case c.Message != "" && c.Result == "Stored": // the message is why the lookup missed
		s += "; the lookup before it missed: " + oneLine(c.Message)
	case c.Message != "":
		s += ": " + oneLine(c.Message)
	}
	return s
}
