package cli

import (
	"context"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// listedPhases are the phases of the children a folded group lists (see
// worthListing); the others are only counted.
var listedPhases = func() []apiv1.Phase {
	var out []apiv1.Phase
	for _, p := range apiv1.NodePhases() {
		if worthListing(p) {
			out = append(out, p)
		}
	}
	return out
}()

// describedNodes reads the nodes of run id that describe shows, a page at
// a time, not the whole run: the top of the run, every child of a group
// of at most foldAbove (or of any group, with allChildren), and of a
// larger group the children it lists (at most foldListMax that run or
// did not succeed), the others counted by phase in unread.
func describedNodes(ctx context.Context, eng engine, id apiv1.RunID, allChildren bool) ([]apiv1.NodeStatus, map[string]map[apiv1.Phase]int, error) {
	nodes, err := allNodes(ctx, eng, id, apiv1.NodeQuery{HasParent: true})
	if err != nil {
		return nil, nil, err
	}
	unread := map[string]map[apiv1.Phase]int{}
	for i := 0; i < len(nodes); i++ { // nodes grows as groups are read
		n := nodes[i]
		if n.Children == nil && len(n.Expansion) == 0 {
			continue
		}
		kids, left, err := childrenOf(ctx, eng, id, n, allChildren)
		if err != nil {
			return nil, nil, err
		}
		nodes = append(nodes, kids...)
		if len(left) > 0 {
			unread[n.Name] = left
		}
	}
	return nodes, unread, nil
}

// childrenOf reads the children of group n that describe lists, and
// counts the others by phase.
func childrenOf(ctx context.Context, eng engine, id apiv1.RunID, n apiv1.NodeStatus, allChildren bool) ([]apiv1.NodeStatus, map[apiv1.Phase]int, error) {
	q := apiv1.NodeQuery{HasParent: true, Parent: n.Name}
	if allChildren || (n.Children != nil && n.Children.Total <= foldAbove) {
		kids, err := allNodes(ctx, eng, id, q)
		return kids, nil, err
	}
	q.Phases, q.Limit = listedPhases, foldListMax
	page, err := eng.RunNodes(ctx, id, q)
	if err != nil {
		return nil, nil, err
	}
	if total(page.Counts) <= foldAbove { // a small group after all: shown whole
		kids, err := allNodes(ctx, eng, id, apiv1.NodeQuery{HasParent: true, Parent: n.Name})
		return kids, nil, err
	}
	left := page.Counts
	for _, k := range page.Items {
		left[k.Phase]--
	}
	return page.Items, left, nil
}

// allNodes reads every page of the nodes q selects.
func allNodes(ctx context.Context, eng reader, id apiv1.RunID, q apiv1.NodeQuery) ([]apiv1.NodeStatus, error) {
	var out []apiv1.NodeStatus
	q.Limit = apiv1.MaxNodePage
	for {
		page, err := eng.RunNodes(ctx, id, q)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if page.Continue == "" {
			return out, nil
		}
		q.Continue = page.Continue
	}
}

func total(counts map[apiv1.Phase]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
