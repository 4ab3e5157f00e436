// Command bench measures the engine against the raw cost of the same work
// and prints one table: every row's baseline is measured in the same run.
//
//	go run ./test/bench -kiln bin/kiln
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/local"
	"kiln.dev/kiln/internal/workflow"
)

// row is one line of the table.
type row struct {
	name, kiln, raw, ratio, extra, target string
	met                                   bool
}

var root, only, kubeconfig, operatorBin, operatorCRDs, dagu, before *string

// maxTasks is the largest run the engine group measures.
var maxTasks *int

// want reports whether the group of rows is to be measured.
func want(group string) bool {
	return *only == "" || slices.Contains(strings.Split(*only, ","), group)
}

func main() {
	kiln := flag.String("kiln", "bin/kiln", "the kiln binary to measure")
	cpus := flag.Int("cpus", 2, "the pool size and the baseline's parallelism")
	root = flag.String("root", ".", "the repository, for its examples")
	only = flag.String("only", "", "run only these groups: engine, memory, before, cache, training, server, runpage, store, kube, dagu (comma separated)")
	kubeconfig = flag.String("kubeconfig", ".k8s/kubeconfig", "the test cluster (make k8s-up), for the kube group")
	operatorBin = flag.String("training-operator", "", "Kubeflow training-operator's binary (hack/training-operator.sh), for the kube group's third baseline; none: no such row")
	operatorCRDs = flag.String("training-operator-crds", "", "the directory of its CRDs (hack/training-operator.sh prints it)")
	maxTasks = flag.Int("max-tasks", 100000, "the engine group's largest run (100, 1000, 10000 or 100000 tasks)")
	rawN := flag.Int("raw-true", 0, "start this many true processes one at a time and exit (traced by the system-call row)")
	dagu = flag.String("dagu", "", "dagu's binary (hack/dagu.sh), for the dagu group; none: no such rows")
	before = flag.String("before", "", "an older kiln binary (make bench builds the one before BENCH_BEFORE), for the before group; none: no such rows")
	flag.Parse()
	if *rawN > 0 {
		rawTrue(*rawN, 1)
		return
	}
	b := &bench{kiln: *kiln, cpus: *cpus, dir: mustTemp()}
	rows := b.all()
	b.cleanup() // before exiting: os.Exit skips deferred calls
	print(rows)
	for _, r := range rows {
		if !r.met {
			os.Exit(1)
		}
	}
}

type bench struct {
	kiln string
	cpus int
	dir  string
	home string
}

func mustTemp() string {
	dir, err := os.MkdirTemp("", "kiln-bench-")
	if err != nil {
		panic(err)
	}
	return dir
}

func (b *bench) cleanup() {
	stopSupervisor(b.home)
	os.RemoveAll(b.dir)
}

func (b *bench) all() []row {
	b.home = filepath.Join(b.dir, "home")
	b.kilnRun(b.write("warm", fanOut(1))) // starts the supervisor
	var rows []row
	if want("engine") {
		rows = append(rows, b.engine()...)
	}
	if *only != "" && want("memory") { // only when asked: the engine group measures the same peaks
		rows = append(rows, b.memoryGroup()...)
	}
	if want("before") && *before != "" {
		rows = append(rows, b.beforeGroup(*before, 1000)...)
	}
	if want("cache") {
		rows = append(rows, b.cache()...)
	}
	if want("training") {
		rows = append(rows, b.gangStart(8), b.ddp(*root))
	}
	if want("server") {
		rows = append(rows, b.server()...)
	}
	if want("runpage") {
		rows = append(rows, b.runPage()...)
	}
	if want("store") {
		rows = append(rows, b.walRow())
		rows = append(rows, b.stores()...)
	}
	if want("kube") {
		rows = append(rows, b.kubeGang(*kubeconfig, 64)...)
	}
	if want("dagu") && *dagu != "" {
		rows = append(rows, b.daguGroup(*dagu)...)
	}
	return rows
}

func (b *bench) engine() []row {
	var sizes []int
	for n := 100; n <= *maxTasks; n *= 10 {
		sizes = append(sizes, n)
	}
	rows, peak := b.floor(sizes)
	largest := sizes[len(sizes)-1]
	rows = append(rows, row{
		name: fmt.Sprintf("peak memory, %d-task run", largest), kiln: fmt.Sprintf("%.1f MiB", float64(peak)/(1<<20)),
		target: "<= 200 MiB", met: peak <= 200<<20,
	})
	rows = append(rows, b.syscalls(200, 2000), b.oneTask())
	mapRow, mapPer, mapRSS := b.mapOf(10000)
	_, fanPer, _ := b.floorRow(shapes[0], 10000, b.cpus)
	flat := float64(mapPer) / float64(fanPer)
	rows = append(rows, mapRow, row{
		name: "time per task, 10,000-item map vs 10,000 tasks", kiln: mapPer.String(), raw: fanPer.String(),
		ratio: fmt.Sprintf("%.2fx", flat), target: "<= 1.2x", met: flat <= 1.2,
	}, row{
		name: "peak memory, 10,000-item map", kiln: fmt.Sprintf("%.1f MiB", float64(mapRSS)/(1<<20)),
		target: "< 200 MiB", met: mapRSS < 200<<20,
	})
	return append(rows, b.compile(10000)...)
}

// mapOf runs one map task of n true items through kiln, and n true
// processes straight from Go.
func (b *bench) mapOf(n int) (row, time.Duration, int64) {
	file := b.write(fmt.Sprintf("map%d", n), head+fmt.Sprintf("  - {name: m, forEach: {range: {count: %d}}, command: [\"true\"]}\n", n))
	wall, rss := b.kilnRun(file)
	return b.engineRow(fmt.Sprintf("map of %d true items, %d at a time", n, b.cpus), n, wall, rawTrue(n, b.cpus)), wall / time.Duration(n), rss
}

// engineRow compares the last run's own span (submitted to finished, as
// the store records it) with the raw cost; the whole process's wall time,
// start-up included, is shown beside it.
func (b *bench) engineRow(name string, n int, wall, raw time.Duration) row {
	span := b.lastRunSpan()
	over := (span - raw) / time.Duration(n)
	return row{
		name: name, kiln: fmt.Sprintf("%s (process %s)", span.Round(time.Millisecond), wall.Round(time.Millisecond)),
		raw: raw.Round(time.Millisecond).String(), ratio: ratio(span, raw), extra: over.Round(time.Microsecond).String() + "/task",
		target: "< 1ms/task", met: over < time.Millisecond,
	}
}

// lastRunSpan reads the newest run's span from kiln itself.
func (b *bench) lastRunSpan() time.Duration {
	r := b.lastRun()
	return r.Status.FinishedAt.Sub(r.CreatedAt)
}

// lastRun reads the newest run from kiln itself.
func (b *bench) lastRun() apiv1.Run {
	out, err := exec.Command(b.kiln, "--home", b.home, "get", "runs", "--limit", "1", "-o", "json").Output()
	must(err)
	runs, err := runList(out)
	must(err)
	return runs[0]
}

// runList reads `kiln get runs -o json`: a List whose items are runs.
func runList(out []byte) ([]apiv1.Run, error) {
	var list struct {
		Items []apiv1.Run `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("no runs in %q", out)
	}
	return list.Items, nil
}

// oneTask times a whole `kiln run` process of one true task (median of 21).
func (b *bench) oneTask() row {
	file := b.write("one", fanOut(1))
	var runs, raws []time.Duration
	for range 21 {
		took, _ := b.kilnRun(file)
		runs = append(runs, took)
		raws = append(raws, rawTrue(1, 1))
	}
	took, raw := median(runs), median(raws)
	return row{
		name: "one-task kiln run, whole process (median of 21)", kiln: took.Round(100 * time.Microsecond).String(),
		raw: raw.Round(10 * time.Microsecond).String(), ratio: ratio(took, raw), target: "<= 10ms", met: took <= 10*time.Millisecond,
	}
}

// compile times validating and compiling an n-task DAG already decoded
// (as an API submission is), and the whole path from its YAML file, in
// this process (medians of 5).
func (b *bench) compile(n int) []row {
	file := b.write("dag", layered(n))
	var whole, compile []time.Duration
	for range 5 {
		start := time.Now()
		docs, err := workflow.ReadFiles([]string{file})
		must(err)
		wf, err := workflow.DecodeWorkflow(&docs[0])
		must(err)
		mid := time.Now()
		_, err = workflow.Compile(&docs[0], wf, nil)
		must(err)
		whole, compile = append(whole, time.Since(start)), append(compile, time.Since(mid))
	}
	c, w := median(compile), median(whole)
	return []row{
		{
			name: fmt.Sprintf("validate and compile a %d-task DAG", n), kiln: c.Round(100 * time.Microsecond).String(),
			target: "< 100ms", met: c < 100*time.Millisecond,
		},
		{
			name: fmt.Sprintf("  the same from its YAML file (%d KiB)", len(layered(n))>>10), kiln: w.Round(time.Millisecond).String(),
			target: "(no target)", met: true,
		},
	}
}

// kilnRun runs the file through kiln and returns its wall time and peak RSS.
func (b *bench) kilnRun(file string) (time.Duration, int64) { return b.kilnRunWays(file, b.cpus) }

// kilnRunWays runs the file through kiln with a pool of ways CPUs and
// returns its wall time and peak RSS.
func (b *bench) kilnRunWays(file string, ways int) (time.Duration, int64) {
	return b.kilnRunHome(file, ways, b.home)
}

// kilnRunHome runs the file through kiln on home with a pool of ways CPUs
// and returns its wall time and the engine process's peak RSS.
func (b *bench) kilnRunHome(file string, ways int, home string) (time.Duration, int64) {
	cmd := exec.Command(b.kiln, "--home", home, "run", "-q", "--cpus", fmt.Sprint(ways), file)
	cmd.Stderr = os.Stderr
	start := time.Now()
	out, err := cmd.Output()
	took := time.Since(start)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kiln run %s: %v\n%s", file, err, out)
		os.Exit(2)
	}
	return took, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
}

// rawTrue starts n true processes from Go, parallel at a time.
func rawTrue(n, parallel int) time.Duration {
	start := time.Now()
	work := make(chan struct{})
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for range work {
				must(exec.Command("true").Run())
			}
		})
	}
	for range n {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	return time.Since(start)
}

func (b *bench) write(name, text string) string {
	p := filepath.Join(b.dir, name+".yaml")
	must(os.WriteFile(p, []byte(text), 0o644))
	return p
}

const head = "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: bench}\nspec:\n  tasks:\n"

func fanOut(n int) string {
	var s strings.Builder
	s.WriteString(head)
	for i := range n {
		fmt.Fprintf(&s, "  - {name: t%d, command: [\"true\"]}\n", i)
	}
	return s.String()
}

func chain(n int) string {
	var s strings.Builder
	s.WriteString(head + "  - {name: t0, command: [\"true\"]}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&s, "  - {name: t%d, dependsOn: [t%d], command: [\"true\"]}\n", i, i-1)
	}
	return s.String()
}

// layered is n tasks in layers of 100, each depending on two of the layer
// before, with a parameter and an upstream output in its arguments.
func layered(n int) string {
	var s strings.Builder
	s.WriteString("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: dag}\nspec:\n  params: [{name: p, default: x}]\n  tasks:\n")
	for i := range n {
		fmt.Fprintf(&s, "  - name: t%d\n    command: [echo, '{{params.p}}']\n    outputs: {parameters: [{name: o}]}\n", i)
		if i >= 100 {
			up1, up2 := i-100, (i-100)/100*100+(i+1)%100
			fmt.Fprintf(&s, "    dependsOn: [t%d, t%d]\n    args: ['{{tasks.t%d.outputs.parameters.o}}']\n", up1, up2, up1)
		}
	}
	return s.String()
}

func ratio(a, b time.Duration) string { return fmt.Sprintf("%.2fx", float64(a)/float64(b)) }

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func print(rows []row) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BENCHMARK\tKILN\tRAW (same run)\tRATIO\tENGINE OVERHEAD\tTARGET\tMET")
	for _, r := range rows {
		met := "yes"
		if !r.met {
			met = "NO"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.name, r.kiln, orDash(r.raw), orDash(r.ratio), orDash(r.extra), r.target, met)
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// stopSupervisor ends the supervisor kiln started for home.
func stopSupervisor(home string) {
	if pid := local.SupervisorPID(home); pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
}
