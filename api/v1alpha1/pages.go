package v1alpha1

import (
	"fmt"
	"strings"
)

// MaxNodePage is the most nodes one page of GET /api/v1/runs/{id}/nodes
// holds; DefaultNodePage is a page's size when no limit is asked.
const (
	MaxNodePage     = 5000
	DefaultNodePage = 500
)

// MaxEventPage is the most events one page of a run's events holds when
// a limit or a tail is asked (GET /api/v1/runs/{id}/events).
const MaxEventPage = 5000

// NodeList is a page of a run's nodes, in the run's order
// (GET /api/v1/runs/{id}/nodes), as Kubernetes lists a kind: limit and
// continue page it; resourceVersion, sent back as sinceVersion, asks for
// the nodes that changed since.
type NodeList struct {
	// Run is the run the nodes are of.
	Run RunID `json:"run"`
	// ResourceVersion marks what of the run's nodes the answer holds:
	// sent back as sinceVersion, it asks for the nodes that changed
	// since. It is opaque, and the same on every page of one listing
	// (that of its first page).
	ResourceVersion string `json:"resourceVersion"`
	// Items are the nodes of the page.
	Items []NodeStatus `json:"items"`
	// Continue is the token of the next page; empty on the last.
	Continue string `json:"continue,omitempty"`
	// RemainingItemCount is how many nodes the query selects after this
	// page.
	RemainingItemCount int `json:"remainingItemCount"`
	// Counts counts by phase the nodes the query selects without its
	// phase filter and its sinceVersion: a map's children, say, when it
	// asks for a parent, whatever page or phase it asks for.
	Counts map[Phase]int `json:"counts"`
}

// NodeQuery selects a page of a run's nodes.
type NodeQuery struct {
	// Phases keeps the nodes in one of them; empty keeps every phase.
	Phases []Phase `json:"phases,omitempty"`
	// Parent, when HasParent, keeps the children of that group node (a
	// map's items, say); "" keeps the nodes at the top of the run.
	Parent    string `json:"parent,omitempty"`
	HasParent bool   `json:"hasParent,omitempty"`
	// SinceVersion keeps the nodes that changed since that resourceVersion
	// of an earlier answer.
	SinceVersion string `json:"sinceVersion,omitempty"`
	// Limit caps the page (0: DefaultNodePage); Continue is the previous
	// page's token.
	Limit    int    `json:"limit,omitempty"`
	Continue string `json:"continue,omitempty"`
}

// EventQuery selects a run's events.
type EventQuery struct {
	// After keeps the events with a greater seq.
	After int64 `json:"after,omitempty"`
	// Limit caps a page, oldest first; Continue is the previous page's
	// token. 0: every event.
	Limit    int    `json:"limit,omitempty"`
	Continue string `json:"continue,omitempty"`
	// Tail keeps only the last Tail events (of those after After).
	Tail int `json:"tail,omitempty"`
}

// NodePhases lists the phases a node can be in.
func NodePhases() []Phase {
	return []Phase{
		PhasePending, PhaseWaiting, PhaseRunning, PhaseRetrying, PhaseSuspended,
		PhaseSucceeded, PhaseFailed, PhaseCancelled, PhaseSkipped,
	}
}

// ParseNodePhases reads a comma-separated list of node phases, in any
// case: "running,FAILED". A name that is no node phase is KLN-4050,
// naming it and the phases there are.
func ParseNodePhases(s string) ([]Phase, error) {
	var out []Phase
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, ok := parsePhaseOf(NodePhases(), part)
		if !ok {
			names := make([]string, 0, len(NodePhases()))
			for _, p := range NodePhases() {
				names = append(names, string(p))
			}
			return nil, &Error{
				Code: CodeUnknownPhase, Field: "phase",
				Message: fmt.Sprintf("%q is not a phase a node can be in; the phases are %s", part, strings.Join(names, ", ")),
				Hint:    "use one of " + strings.Join(names, ", ") + ", in any case, several separated by commas",
			}
		}
		out = append(out, p)
	}
	return out, nil
}

func parsePhaseOf(phases []Phase, s string) (Phase, bool) {
	for _, p := range phases {
		if strings.EqualFold(string(p), s) {
			return p, true
		}
	}
	return "", false
}
