package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// oneTaskRuns is how many one-task runs the memory group takes the
// median peak of, per binary.
const oneTaskRuns = 5

// memoryGroup measures only the two memory rows: the peak RSS of
// the engine process of a fan-out of -max-tasks tasks, 2-way, and of a
// one-task run (the median of oneTaskRuns). With -before, the build before
// runs the same files on a home of its own, alternating with this one,
// and its peak is shown beside.
func (b *bench) memoryGroup() []row {
	n := *maxTasks
	fan := b.write(fmt.Sprintf("mem-fan-out%d", n), fanOut(n))
	one := b.write("mem-one", fanOut(1))
	var now, old []int64
	var nowFan, oldFan int64
	// The one-task runs have homes of their own, without the large
	// run's store and supervisor.
	for i := range oneTaskRuns {
		now = append(now, b.peakOf(b.kiln, "mem-one-new", one))
		if *before != "" {
			old = append(old, b.peakOf(*before, "mem-one-old", one))
		}
		if i == 0 {
			nowFan = b.peakOf(b.kiln, "mem-fan-new", fan)
			if *before != "" {
				oldFan = b.peakOf(*before, "mem-fan-old", fan)
			}
		}
	}
	for _, home := range []string{"mem-one-new", "mem-one-old", "mem-fan-new", "mem-fan-old"} {
		stopSupervisor(filepath.Join(b.dir, home))
	}
	return []row{
		memRow(fmt.Sprintf("peak memory, %d-task fan-out, 2-way (engine process)", n), nowFan, oldFan, 200),
		memRow(fmt.Sprintf("peak memory, one-task run (median of %d)", oneTaskRuns), medianInt(now), medianInt(old), 30),
	}
}

// peakOf runs file with binary kiln, 2-way, on the home named name under
// the bench's directory, and returns the engine process's peak RSS, as
// GNU time reads it. The peak os/exec reports is at least the bench's
// own: Go starts a child on the parent's memory (vfork), and the kernel
// counts that memory's high-water mark as the child's when it execs; a
// one-task run read as 78 MiB, the bench's size, where it takes 40.
func (b *bench) peakOf(kiln, name, file string) int64 {
	out := filepath.Join(b.dir, name+".rss")
	cmd := exec.Command(gnuTime, "-f", "%M", "-o", out, kiln, "--home", filepath.Join(b.dir, name), "run", "-q", "--cpus", "2", file)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "kiln run %s: %v\n", file, err)
		os.Exit(2)
	}
	text, err := os.ReadFile(out)
	must(err)
	kib, err := strconv.ParseInt(strings.TrimSpace(string(text)), 10, 64)
	must(err)
	return kib << 10
}

// gnuTime starts a command with fork, not vfork, and prints its peak RSS
// in KiB (-f %M).
const gnuTime = "/usr/bin/time"

// memRow is a row of peak memory against a target of at most target
// MiB, with the build before's peak beside it when it ran (old > 0).
func memRow(name string, now, old int64, target int64) row {
	r := row{name: name, kiln: mib(now), target: fmt.Sprintf("<= %d MiB", target), met: now <= target<<20}
	if old > 0 {
		r.raw, r.ratio = mib(old)+" (build before)", fmt.Sprintf("%.2fx", float64(now)/float64(old))
	}
	return r
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func medianInt(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}
