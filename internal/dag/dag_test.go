package dag

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func build(n int, edges ...[2]int) *Graph {
	g := New(n)
	for _, e := range edges {
		g.AddEdge(e[0], e[1])
	}
	return g
}

func TestOrder(t *testing.T) {
	t.Parallel()

	cases := map[string]struct {
		g         *Graph
		wantOrder []int
		wantCycle []int
	}{
		"independent nodes keep index order": {g: build(3), wantOrder: []int{0, 1, 2}},
		"diamond":                            {g: build(4, [2]int{0, 1}, [2]int{0, 2}, [2]int{1, 3}, [2]int{2, 3}), wantOrder: []int{0, 1, 2, 3}},
		"reverse chain":                      {g: build(3, [2]int{2, 1}, [2]int{1, 0}), wantOrder: []int{2, 1, 0}},
		"two-node cycle":                     {g: build(2, [2]int{0, 1}, [2]int{1, 0}), wantCycle: []int{0, 1, 0}},
		"self loop":                          {g: build(2, [2]int{1, 1}), wantCycle: []int{1, 1}},
		"cycle behind a root":                {g: build(4, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 3}, [2]int{3, 1}), wantCycle: []int{1, 2, 3, 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			order, cycle := tc.g.Order()
			if diff := cmp.Diff(tc.wantOrder, order); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCycle, cycle); diff != "" {
				t.Errorf("cycle (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCycleEdgesAreRealDependencies(t *testing.T) {
	t.Parallel()
	g := build(5, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 3}, [2]int{3, 4}, [2]int{4, 2})
	_, cycle := g.Order()
	if len(cycle) < 3 || cycle[0] != cycle[len(cycle)-1] {
		t.Fatalf("cycle = %v, want a closed path", cycle)
	}
	for i := 0; i+1 < len(cycle); i++ {
		from, to := cycle[i], cycle[i+1]
		found := false
		for _, u := range g.Upstream(to) {
			found = found || u == from
		}
		if !found {
			t.Errorf("cycle step %d -> %d is not an edge", from, to)
		}
	}
}

func TestIsAncestor(t *testing.T) {
	t.Parallel()
	g := build(4, [2]int{0, 1}, [2]int{1, 2})
	if !g.IsAncestor(0, 2) {
		t.Error("IsAncestor(0, 2) = false, want true through 1")
	}
	if g.IsAncestor(2, 0) {
		t.Error("IsAncestor(2, 0) = true, want false: edges point the other way")
	}
	if g.IsAncestor(3, 2) {
		t.Error("IsAncestor(3, 2) = true, want false: 3 is unconnected")
	}
}

func TestCompactKeepsEveryEdgeAndUnpacksOnChange(t *testing.T) {
	t.Parallel()
	edges := [][2]int{{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}}
	want, g := build(5, edges...), build(5, edges...)
	g.Compact()
	if g.up != nil || g.packed == nil {
		t.Fatal("Compact left the per-node lists")
	}
	same := func(when string) {
		t.Helper()
		if g.Len() != want.Len() {
			t.Fatalf("%s: %d nodes, want %d", when, g.Len(), want.Len())
		}
		for i := range want.Len() {
			if diff := cmp.Diff(want.Upstream(i), g.Upstream(i), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: upstream of %d (-want +got):\n%s", when, i, diff)
			}
			if diff := cmp.Diff(want.Downstream(i), g.Downstream(i), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: downstream of %d (-want +got):\n%s", when, i, diff)
			}
		}
		wo, _ := want.Order()
		if o, _ := g.Order(); !cmp.Equal(wo, o) {
			t.Errorf("%s: order %v, want %v", when, o, wo)
		}
	}
	same("packed")
	if up := g.Upstream(3); cap(up) != len(up) {
		t.Errorf("a packed node's list has room past its end (cap %d, len %d): an append would write over its neighbour's", cap(up), len(up))
	}
	c := g.Clone()
	c.AddEdge(4, 0)
	same("after a clone grew")
	first := g.Grow(1)
	g.AddEdge(4, first)
	want.Grow(1)
	want.AddEdge(4, first)
	same("grown")
}
