package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuTarget is the most CPU the engine and the supervisor together may
// spend per task.
const cpuTarget = 600 * time.Microsecond

// beforeRounds is how many times each binary runs each shape; the rounds
// alternate, so that the machine's load falls on both alike.
const beforeRounds = 3

// sample is one run of a shape by one binary: its own span per task and
// the CPU both processes spent per task.
type sample struct{ span, cpu time.Duration }

// beforeGroup runs the same shapes with the binary before (an older
// build) and this one, alternating, each on a home and a supervisor of
// its own, and compares their time and CPU per task.
func (b *bench) beforeGroup(before string, n int) []row {
	var rows []row
	for _, s := range shapes {
		file := b.write(fmt.Sprintf("before-%s%d", s.name, n), s.yaml(n))
		var old, now []sample
		for i := range beforeRounds {
			old = append(old, b.cpuRun(before, fmt.Sprintf("old-%s-%d", s.name, i), file, n))
			now = append(now, b.cpuRun(b.kiln, fmt.Sprintf("new-%s-%d", s.name, i), file, n))
		}
		o, w := medianSample(old), medianSample(now)
		rows = append(rows, row{
			name: fmt.Sprintf("%s of %d, 2-way: time per task, this build vs the build before", s.name, n),
			kiln: w.span.Round(time.Microsecond).String(), raw: o.span.Round(time.Microsecond).String(),
			ratio: ratio(w.span, o.span), target: "<= 1x", met: w.span <= o.span,
		}, row{
			name: "  CPU per task, engine + supervisor (build before beside)",
			kiln: w.cpu.Round(time.Microsecond).String(), raw: o.cpu.Round(time.Microsecond).String(),
			ratio: ratio(w.cpu, o.cpu), target: "<= 0.6ms", met: w.cpu <= cpuTarget,
		})
	}
	return rows
}

// cpuRun runs file with binary kiln on a fresh home named name, its
// supervisor started first, and returns the run's span and the CPU the
// engine process and the supervisor spent, per task.
func (b *bench) cpuRun(kiln, name, file string, n int) sample {
	home := filepath.Join(b.dir, name)
	must(os.MkdirAll(home, 0o755))
	warm := b.write(name+"-warm", fanOut(1))
	must(exec.Command(kiln, "--home", home, "run", "-q", warm).Run()) // starts the supervisor
	sup := supervisorOf(home)
	supBefore := procCPU(sup)
	cmd := exec.Command(kiln, "--home", home, "run", "-q", "--cpus", "2", file)
	cmd.Stderr = os.Stderr
	must(cmd.Run())
	supCPU := procCPU(sup) - supBefore
	engCPU := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	out, err := exec.Command(kiln, "--home", home, "get", "runs", "--limit", "1", "-o", "json").Output()
	must(err)
	runs, err := runList(out)
	must(err)
	span := runs[0].Status.FinishedAt.Sub(runs[0].CreatedAt)
	if sup > 0 {
		_ = syscall.Kill(sup, syscall.SIGTERM)
	}
	return sample{span: span / time.Duration(n), cpu: (supCPU + engCPU) / time.Duration(n)}
}

// supervisorOf finds the supervisor serving home by its command line, so
// that builds with different layouts of the home are found alike; 0 when
// none runs.
func supervisorOf(home string) int {
	entries, err := os.ReadDir("/proc")
	must(err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(bytes.TrimRight(cmdline, "\x00")), "\x00")
		if len(args) > 1 && args[1] == "supervise" && slices.Contains(args, home) {
			return pid
		}
	}
	return 0
}

// procCPU is the user and system time process pid has spent, its own
// threads only (not its children's); 0 for no process.
func procCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: count from after it.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return time.Duration(utime+stime) * tick
}

func medianSample(s []sample) sample {
	spans, cpus := make([]time.Duration, len(s)), make([]time.Duration, len(s))
	for i, x := range s {
		spans[i], cpus[i] = x.span, x.cpu
	}
	return sample{span: median(spans), cpu: median(cpus)}
}
