package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/local"
)

// daguRounds is how many alternating kiln/dagu rounds each row of the
// dagu group takes the medians of.
const daguRounds = 3

// daguShape is one DAG of the dagu group, written for each engine.
type daguShape struct {
	name, file    string
	n             int
	kiln, dagu    string
	target, again bool
}

// daguGroup runs the same DAGs through kiln and through dagu (built by
// hack/dagu.sh) as whole processes, kiln and dagu alternating for
// daguRounds rounds, and compares the medians of their wall times. Each
// round's runs have a fresh home of their own: kiln's supervisor is
// started by its first run there and stopped before dagu runs; dagu's
// data directory is made by its first run. Both run -cpus tasks at a time
// (kiln's --cpus, dagu's max_active_steps). A run counts only if its
// engine says it succeeded with every task: kiln's stored run, dagu's
// exit code and its status.
func (b *bench) daguGroup(bin string) []row {
	version, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		return []row{{name: "side by side with dagu", kiln: fmt.Sprintf("dagu does not start: %v: %s", err, version), target: "dagu runs"}}
	}
	shapes := []daguShape{
		{"one true task", "one", 1, fanOut(1), daguDAG(1, b.cpus, false), false, true},
		{"chain of 200 true tasks", "chain200", 200, chain(200), daguDAG(200, b.cpus, true), true, false},
		{fmt.Sprintf("fan-out of 100 true tasks, %d at a time", b.cpus), "fan100", 100, fanOut(100), daguDAG(100, b.cpus, false), true, false},
		{fmt.Sprintf("fan-out of 1,000 true tasks, %d at a time", b.cpus), "fan1000", 1000, fanOut(1000), daguDAG(1000, b.cpus, false), true, false},
	}
	rows := make([]row, 0, len(shapes))
	for _, s := range shapes {
		rows = append(rows, b.daguRow(bin, strings.TrimSpace(string(version)), s)...)
	}
	return rows
}

// daguRow times one shape both ways and makes its row; with again, a
// second row times a second run in each round's homes, kiln's supervisor
// already up and dagu's data directory already made.
func (b *bench) daguRow(bin, version string, s daguShape) []row {
	names := []string{fmt.Sprintf("%s, kiln vs dagu (whole process, fresh home, median of %d)", s.name, daguRounds)}
	if s.again {
		names = append(names, "  the same, the second run in each home (kiln's supervisor up)")
	}
	target := "(no target)"
	if s.target {
		target = ">= 10x faster"
	}
	kilnFile, daguFile := b.write("kiln-"+s.file, s.kiln), b.write("dagu-"+s.file, s.dagu)
	kilnTimes, daguTimes := make([][]time.Duration, len(names)), make([][]time.Duration, len(names))
	for i := range daguRounds {
		k, err := b.kilnRuns(kilnFile, s.n, len(names), filepath.Join(b.dir, fmt.Sprintf("kiln-%s-%d", s.file, i)))
		if err != nil {
			return []row{{name: names[0], kiln: "failed: " + err.Error(), target: target}}
		}
		d, err := daguRuns(bin, daguFile, s.n, len(names), filepath.Join(b.dir, fmt.Sprintf("dagu-%s-%d", s.file, i)))
		if err != nil {
			return []row{{name: names[0], kiln: ms(k[0]), raw: "dagu failed: " + err.Error(), target: target}}
		}
		for j := range names {
			kilnTimes[j], daguTimes[j] = append(kilnTimes[j], k[j]), append(daguTimes[j], d[j])
			fmt.Fprintf(os.Stderr, "dagu group, %s, round %d, run %d in its home: kiln %s, dagu %s\n", s.name, i+1, j+1, ms(k[j]), ms(d[j]))
		}
	}
	rows := make([]row, 0, len(names))
	for j, name := range names {
		k, d := median(slices.Clone(kilnTimes[j])), median(slices.Clone(daguTimes[j]))
		faster := float64(d) / float64(k)
		rows = append(rows, row{
			name: name, kiln: ms(k), raw: fmt.Sprintf("%s (dagu %s)", ms(d), version),
			ratio: fmt.Sprintf("%.1fx faster", faster), extra: "kiln " + spread(kilnTimes[j]) + ", dagu " + spread(daguTimes[j]),
			target: target, met: !s.target || faster >= 10,
		})
	}
	return rows
}

// kilnRuns runs the file through `kiln run -q` times times in home, a
// fresh one, and returns each process's wall time; a run counts once
// kiln's stored run says every one of its n tasks succeeded. The
// supervisor the first run started is stopped before it returns, so the
// next runs have the machine to themselves.
func (b *bench) kilnRuns(file string, n, times int, home string) ([]time.Duration, error) {
	defer stopAndWait(home)
	var took []time.Duration
	for range times {
		cmd := exec.Command(b.kiln, "--home", home, "run", "-q", "--cpus", fmt.Sprint(b.cpus), file)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		took = append(took, time.Since(start))
		if err != nil {
			return nil, fmt.Errorf("kiln run: %w: %s", err, tail(out))
		}
		if err := b.succeeded(home, n); err != nil {
			return nil, err
		}
	}
	return took, nil
}

// succeeded reads the newest run of home from kiln and says whether it
// succeeded with n tasks.
func (b *bench) succeeded(home string, n int) error {
	out, err := exec.Command(b.kiln, "--home", home, "get", "runs", "--limit", "1", "-o", "json").Output()
	if err != nil {
		return fmt.Errorf("kiln get runs: %w", err)
	}
	runs, err := runList(out)
	if err != nil {
		return fmt.Errorf("kiln get runs: %w", err)
	}
	if len(runs) != 1 {
		return fmt.Errorf("kiln get runs: %d runs, not 1", len(runs))
	}
	st := runs[0].Status
	if p := st.Progress; st.Phase != apiv1.PhaseSucceeded || p == nil || p.Total != n || p.Succeeded != n {
		return fmt.Errorf("kiln's run is %s, not %d tasks succeeded: %s", st.Phase, n, st.Message)
	}
	return nil
}

// stopAndWait stops the supervisor of home and waits (up to 10 s) until
// it has let go of its lock, that is, exited.
func stopAndWait(home string) {
	stopSupervisor(home)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && local.SupervisorPID(home) > 0; {
		<-time.After(10 * time.Millisecond)
	}
}

// daguRuns runs the file through `dagu start` times times with home, a
// fresh directory, as its DAGU_HOME (and HOME, so no configuration of the
// user's is read) and returns each process's wall time; a run counts once
// its exit code and `dagu status` say it succeeded with all n steps.
func daguRuns(bin, file string, n, times int, home string) ([]time.Duration, error) {
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	env := append(os.Environ(), "HOME="+home, "DAGU_HOME="+home)
	var took []time.Duration
	for range times {
		cmd := exec.Command(bin, "start", "-q", file)
		cmd.Env = env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		took = append(took, time.Since(start))
		if err != nil {
			return nil, fmt.Errorf("dagu start: %w: %s", err, tail(out))
		}
		status := exec.Command(bin, "status", strings.TrimSuffix(filepath.Base(file), ".yaml"))
		status.Env = env
		out, err = status.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("dagu status: %w: %s", err, tail(out))
		}
		if ok := bytes.Count(out, []byte("[succeeded]")); !bytes.Contains(out, []byte("Result: Succeeded")) || ok != n {
			return nil, fmt.Errorf("dagu status shows no succeeded run of %d succeeded steps (%d): %s", n, ok, tail(out))
		}
	}
	return took, nil
}

// daguDAG is n true steps in dagu's format, parallel at a time, each
// depending on the one before when chained.
func daguDAG(n, parallel int, chained bool) string {
	var s strings.Builder
	fmt.Fprintf(&s, "type: graph\nmax_active_steps: %d\nsteps:\n", parallel)
	for i := range n {
		fmt.Fprintf(&s, "  - {name: t%d, command: \"true\"", i)
		if chained && i > 0 {
			fmt.Fprintf(&s, ", depends: [t%d]", i-1)
		}
		s.WriteString("}\n")
	}
	return s.String()
}

// tail is the end of a command's output on one line, for a row.
func tail(out []byte) string {
	const most = 300
	if len(out) > most {
		out = out[len(out)-most:]
	}
	return strings.Join(strings.Fields(string(out)), " ")
}
