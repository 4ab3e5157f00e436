package main

import (
	"fmt"
	"time"
)

// floorTarget is the most the engine and the supervisor may add to each
// task beyond the raw floor.
const floorTarget = 300 * time.Microsecond

// shape is a DAG of n true tasks, and how many of them the raw floor
// runs at once.
type shape struct {
	name string
	yaml func(n int) string
	raw  func(n, ways int) time.Duration
	// most is the most tasks a spec of the shape can hold within the 4
	// MiB a spec file may have (KLN-1023); 0: no bound below 100,000.
	most int
}

var shapes = []shape{
	{name: "fan-out", yaml: fanOut, raw: rawTrue},
	// A chain's task names its upstream: 58 bytes a task.
	{name: "chain", yaml: chain, raw: func(n, _ int) time.Duration { return rawTrue(n, 1) }, most: 50000},
}

// sizesOf is sizes as shape s can be written: a size over its bound
// becomes the bound.
func (s shape) sizesOf(sizes []int) []int {
	var out []int
	for _, n := range sizes {
		if s.most > 0 && n > s.most {
			n = s.most
		}
		out = append(out, n)
	}
	return out
}

// floor measures every shape at 1-way and 2-way for each size: the time
// each task costs beyond starting the same true processes straight from
// Go, and how that cost grows from the smallest size to the largest. It
// returns the rows and the peak memory of the largest runs.
func (b *bench) floor(sizes []int) ([]row, int64) {
	var rows []row
	var peak int64
	for _, s := range shapes {
		sizes := s.sizesOf(sizes)
		for _, ways := range []int{1, 2} {
			per := map[int]time.Duration{}
			for _, n := range sizes {
				r, p, rss := b.floorRow(s, n, ways)
				rows, per[n] = append(rows, r), p
				if n == sizes[len(sizes)-1] {
					peak = max(peak, rss)
				}
			}
			rows = append(rows, growthRow(s.name, ways, sizes, per))
		}
	}
	return rows, peak
}

// floorRow runs n tasks of shape s through kiln, ways at a time, and the
// raw floor right after, and returns the row, kiln's time per task and
// its peak memory.
func (b *bench) floorRow(s shape, n, ways int) (row, time.Duration, int64) {
	file := b.write(fmt.Sprintf("%s%d", s.name, n), s.yaml(n))
	wall, rss := b.kilnRunWays(file, ways)
	span := b.lastRunSpan()
	raw := s.raw(n, ways)
	over := (span - raw) / time.Duration(n)
	return row{
		name: fmt.Sprintf("%s of %d true tasks, %d-way", s.name, n, ways),
		kiln: fmt.Sprintf("%s (process %s)", span.Round(time.Millisecond), wall.Round(time.Millisecond)),
		raw:  raw.Round(time.Millisecond).String(), ratio: ratio(span, raw),
		extra:  over.Round(time.Microsecond).String() + "/task",
		target: "<= 0.3ms/task", met: over <= floorTarget,
	}, span / time.Duration(n), rss
}

// growthRow compares the time per task of the largest size with the
// smallest's.
func growthRow(name string, ways int, sizes []int, per map[int]time.Duration) row {
	lo, hi := sizes[0], sizes[len(sizes)-1]
	g := float64(per[hi]) / float64(per[lo])
	return row{
		name: fmt.Sprintf("  %s %d-way: time per task, %d vs %d", name, ways, hi, lo),
		kiln: per[hi].Round(time.Microsecond).String(), raw: per[lo].Round(time.Microsecond).String(),
		ratio: fmt.Sprintf("%.2fx", g), target: "<= 1.1x", met: g <= 1.1,
	}
}
