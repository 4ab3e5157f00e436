// Package dag is pure graph code over nodes numbered 0..n-1: topological
// order, cycle detection with the cycle's path, and ancestry. It knows
// nothing about tasks or runs.
package dag

import "math"

// Graph is a directed acyclic graph. Edges point from an upstream node to
// the nodes that depend on it. While it is built, each node holds its own
// lists; Compact packs them into one list each way, for a graph that is
// read far more than it grows (a compiled plan's), and the first change
// after that unpacks them.
type Graph struct {
	up   [][]int
	down [][]int
	// packed holds the edges once Compact has run, until the next change.
	packed *packed
}

// packed is a graph's edges in compressed sparse rows: node i's upstream
// nodes are up[upAt[i]:upAt[i+1]], its downstream ones likewise.
type packed struct {
	upAt, downAt []int32
	up, down     []int
}

// New returns a graph of n nodes and no edges.
func New(n int) *Graph {
	return &Graph{up: make([][]int, n), down: make([][]int, n)}
}

// Len returns the number of nodes.
func (g *Graph) Len() int {
	if g.packed != nil {
		return len(g.packed.upAt) - 1
	}
	return len(g.up)
}

// AddEdge records that node to depends on node from.
func (g *Graph) AddEdge(from, to int) {
	g.unpack()
	g.up[to] = append(g.up[to], from)
	g.down[from] = append(g.down[from], to)
}

// Upstream returns the nodes i depends on. The slice must not be changed.
func (g *Graph) Upstream(i int) []int {
	if p := g.packed; p != nil {
		return p.up[p.upAt[i]:p.upAt[i+1]:p.upAt[i+1]]
	}
	return g.up[i]
}

// Downstream returns the nodes that depend on i. The slice must not be changed.
func (g *Graph) Downstream(i int) []int {
	if p := g.packed; p != nil {
		return p.down[p.downAt[i]:p.downAt[i+1]:p.downAt[i+1]]
	}
	return g.down[i]
}

// Compact packs the graph's edges into one list each way: two 4-byte
// offsets a node instead of two 24-byte lists, and no allocation per
// node. Reads are unchanged; a later change unpacks the graph first.
// Graphs of more than 2^31-1 edges stay as they are.
func (g *Graph) Compact() {
	if g.packed != nil {
		return
	}
	upAt, up, ok := pack(g.up)
	downAt, down, ok2 := pack(g.down)
	if !ok || !ok2 {
		return
	}
	g.packed = &packed{upAt: upAt, downAt: downAt, up: up, down: down}
	g.up, g.down = nil, nil
}

// pack lays lists end to end: list i is all[at[i]:at[i+1]].
func pack(lists [][]int) (at []int32, all []int, ok bool) {
	total := 0
	for _, l := range lists {
		total += len(l)
	}
	if total > math.MaxInt32 {
		return nil, nil, false
	}
	at, all = make([]int32, len(lists)+1), make([]int, 0, total)
	for i, l := range lists {
		all = append(all, l...)
		at[i+1] = int32(len(all))
	}
	return at, all, true
}

// unpack gives each node its own lists again, for a change.
func (g *Graph) unpack() {
	p := g.packed
	if p == nil {
		return
	}
	n := len(p.upAt) - 1
	g.up, g.down = make([][]int, n), make([][]int, n)
	for i := range n {
		g.up[i] = append([]int(nil), p.up[p.upAt[i]:p.upAt[i+1]]...)
		g.down[i] = append([]int(nil), p.down[p.downAt[i]:p.downAt[i+1]]...)
	}
	g.packed = nil
}

// Roots returns the nodes with no upstream, in index order.
func (g *Graph) Roots() []int {
	var roots []int
	for i := range g.Len() {
		if len(g.Upstream(i)) == 0 {
			roots = append(roots, i)
		}
	}
	return roots
}

// Order returns the nodes in a topological order (Kahn's algorithm, ties in
// index order). If the graph has a cycle, order is nil and cycle holds one
// cycle's nodes in dependency order, its first node repeated at the end.
func (g *Graph) Order() (order, cycle []int) {
	n := g.Len()
	indeg := make([]int, n)
	for i := range n {
		indeg[i] = len(g.Upstream(i))
	}
	order = make([]int, 0, n)
	order = append(order, g.Roots()...)
	for head := 0; head < len(order); head++ {
		for _, d := range g.Downstream(order[head]) {
			if indeg[d]--; indeg[d] == 0 {
				order = append(order, d)
			}
		}
	}
	if len(order) == n {
		return order, nil
	}
	return nil, g.findCycle(indeg)
}

// findCycle walks upstream edges among the nodes Kahn's algorithm could not
// order (indeg > 0). Each such node has an unordered upstream node, so the
// walk must revisit a node; the revisited stretch is a cycle.
func (g *Graph) findCycle(indeg []int) []int {
	start := -1
	for i, d := range indeg {
		if d > 0 {
			start = i
			break
		}
	}
	seenAt := map[int]int{}
	var path []int
	for n := start; ; {
		if at, seen := seenAt[n]; seen {
			cycle := append([]int(nil), path[at:]...)
			for i, j := 0, len(cycle)-1; i < j; i, j = i+1, j-1 {
				cycle[i], cycle[j] = cycle[j], cycle[i]
			}
			return closeAtSmallest(cycle)
		}
		seenAt[n] = len(path)
		path = append(path, n)
		for _, u := range g.Upstream(n) {
			if indeg[u] > 0 {
				n = u
				break
			}
		}
	}
}

// IsAncestor reports whether a is upstream of b, directly or through other
// nodes. It searches b's ancestry breadth first, so a direct dependency,
// the common case, is found at once.
func (g *Graph) IsAncestor(a, b int) bool {
	seen := map[int]bool{b: true}
	queue := []int{b}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, u := range g.Upstream(n) {
			if u == a {
				return true
			}
			if !seen[u] {
				seen[u] = true
				queue = append(queue, u)
			}
		}
	}
	return false
}

// closeAtSmallest rotates cycle to start at its smallest node, so the same
// cycle always prints the same way, and repeats that node at the end.
func closeAtSmallest(cycle []int) []int {
	low := 0
	for i, n := range cycle {
		if n < cycle[low] {
			low = i
		}
	}
	out := append(append([]int(nil), cycle[low:]...), cycle[:low]...)
	return append(out, out[0])
}

// Clone returns a copy of g that can grow without changing g.
func (g *Graph) Clone() *Graph {
	n := g.Len()
	c := &Graph{up: make([][]int, n), down: make([][]int, n)}
	for i := range n {
		c.up[i] = append([]int(nil), g.Upstream(i)...)
		c.down[i] = append([]int(nil), g.Downstream(i)...)
	}
	return c
}

// Grow adds n nodes without edges and returns the number of the first.
func (g *Graph) Grow(n int) int {
	g.unpack()
	first := len(g.up)
	g.up = append(g.up, make([][]int, n)...)
	g.down = append(g.down, make([][]int, n)...)
	return first
}
