package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"kiln.dev/kiln/internal/backend/local"
)

// syscallTarget is the most system calls the supervisor and the engine
// together may make per task.
const syscallTarget = 40

// syscalls counts the system calls the supervisor and the engine make per
// task: each process traced by strace through a chain of small and one of
// large tasks, each with a supervisor of its own, the difference divided
// by the difference of tasks, so start-up cancels out. Only the calls of
// kiln's own threads count, not those of the tasks it forks.
func (b *bench) syscalls(small, large int) row {
	name := fmt.Sprintf("system calls per task, supervisor + engine (chain of %d vs %d)", large, small)
	if _, err := exec.LookPath("strace"); err != nil {
		return row{name: name, kiln: "strace is not installed (make deps)", target: fmt.Sprintf("<= %d", syscallTarget)}
	}
	supS, engS := b.traceChain(small)
	supL, engL := b.traceChain(large)
	n := float64(large - small)
	sup, eng := float64(supL-supS)/n, float64(engL-engS)/n
	raw := float64(b.rawCalls(large)-b.rawCalls(small)) / n
	return row{
		name: name, kiln: fmt.Sprintf("%.0f (supervisor %.0f, engine %.0f)", sup+eng, sup, eng),
		raw: fmt.Sprintf("%.0f", raw), ratio: fmt.Sprintf("%.1fx", (sup+eng)/raw), target: fmt.Sprintf("<= %d", syscallTarget),
		met: sup+eng <= syscallTarget,
	}
}

// traceChain runs a chain of n true tasks on a home of its own, the
// supervisor and the engine each under strace, and returns their calls.
func (b *bench) traceChain(n int) (sup, eng int) {
	home := filepath.Join(b.dir, fmt.Sprintf("trace%d", n))
	must(os.MkdirAll(home, 0o755))
	supTrace, engTrace := filepath.Join(b.dir, "sup.trace"), filepath.Join(b.dir, "eng.trace")
	s := exec.Command("strace", "-f", "-qq", "-o", supTrace, b.kiln, "supervise", "--home", home)
	must(s.Start())
	waitSocket(home)
	file := b.write(fmt.Sprintf("tracechain%d", n), chain(n))
	e := exec.Command("strace", "-f", "-qq", "-o", engTrace, b.kiln, "--home", home, "run", "-q", "--cpus", "2", file)
	e.Stderr = os.Stderr
	must(e.Run())
	stopSupervisor(home) // strace ends with it
	_ = s.Wait()
	return ownCalls(supTrace), ownCalls(engTrace)
}

// rawCalls is what starting n true processes straight from Go, one at a
// time, costs its own threads, traced the same way.
func (b *bench) rawCalls(n int) int {
	trace := filepath.Join(b.dir, "raw.trace")
	self, err := os.Executable()
	must(err)
	cmd := exec.Command("strace", "-f", "-qq", "-o", trace, self, "-raw-true", strconv.Itoa(n))
	must(cmd.Run())
	return ownCalls(trace)
}

// waitSocket waits for the supervisor of home to listen.
func waitSocket(home string) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		if _, err := os.Stat(local.SocketPath(home)); err == nil {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			panic("the traced supervisor did not start")
		}
	}
}

var traceLine = regexp.MustCompile(`^(\d+)\s+(<\.\.\. )?([a-z0-9_]+)`)

// ownCalls counts the calls in an strace -f output made by the traced
// process's threads: a process that called execve after the first is a
// child (a task, or the supervisor kiln spawned), and none of its calls
// count. A call interrupted and resumed counts once.
func ownCalls(path string) int {
	f, err := os.Open(path)
	must(err)
	defer f.Close()
	calls := map[int]int{}
	children := map[int]bool{}
	first := -1
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		m := traceLine.FindStringSubmatch(sc.Text())
		if m == nil || m[2] != "" {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if first < 0 {
			first = pid
		}
		if m[3] == "execve" && pid != first {
			children[pid] = true
		}
		calls[pid]++
	}
	must(sc.Err())
	total := 0
	for pid, n := range calls {
		if !children[pid] {
			total += n
		}
	}
	return total
}
