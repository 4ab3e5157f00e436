// Package dag is pure graph code over nodes numbered 0..n-1: topological
// order, cycle detection with the cycle's path, and ancestry. It knows
// nothing about tasks or runs.
package dag

// Graph is a directed acyclic graph under construction. Edges point from an
// upstream node to the nodes that depend on it.
type Graph struct {
	up   [][]int
	down [][]int
}

// New returns a graph of n nodes and no edges.
func New(n int) *Graph {
	return &Graph{up: make([][]int, n), down: make([][]int, n)}
}

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.up) }

// AddEdge records that node to depends on node from.
func (g *Graph) AddEdge(from, to int) {
	g.up[to] = append(g.up[to], from)
	g.down[from] = append(g.down[from], to)
}

// Upstream returns the nodes i depends on. The slice must not be changed.
func (g *Graph) Upstream(i int) []int { return g.up[i] }

// Downstream returns the nodes that depend on i. The slice must not be changed.
func (g *Graph) Downstream(i int) []int { return g.down[i] }

// Roots returns the nodes with no upstream, in index order.
func (g *Graph) Roots() []int {
	var roots []int
	for i, up := range g.up {
		if len(up) == 0 {
			roots = append(roots, i)
		}
	}
	return roots
}

// Order returns the nodes in a topological order (Kahn's algorithm, ties in
// index order). If the graph has a cycle, order is nil and cycle holds one
// cycle's nodes in dependency order, its first node repeated at the end.
func (g *Graph) Order() (order, cycle []int) {
	indeg := make([]int, len(g.up))
	for i, up := range g.up {
		indeg[i] = len(up)
	}
	order = make([]int, 0, len(g.up))
	order = append(order, g.Roots()...)
	for head := 0; head < len(order); head++ {
		for _, d := range g.down[order[head]] {
			if indeg[d]--; indeg[d] == 0 {
				order = append(order, d)
			}
		}
	}
	if len(order) == len(g.up) {
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
		for _, u := range g.up[n] {
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
		for _, u := range g.up[n] {
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
	c := &Graph{up: make([][]int, len(g.up)), down: make([][]int, len(g.down))}
	for i := range g.up {
		c.up[i] = append([]int(nil), g.up[i]...)
		c.down[i] = append([]int(nil), g.down[i]...)
	}
	return c
}

// Grow adds n nodes without edges and returns the number of the first.
func (g *Graph) Grow(n int) int {
	first := len(g.up)
	g.up = append(g.up, make([][]int, n)...)
	g.down = append(g.down, make([][]int, n)...)
	return first
}
