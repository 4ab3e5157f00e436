package e2e

// TestLifecycleModel is a randomized model test of a run's life: from a
// seed it generates a workflow (model_gen_test.go) and a sequence of
// operations, drives the real binary through them with real processes,
// and checks invariants after every step (model_check_test.go) and, once
// every run has ended, that describe, the API and the UI's JSON agree
// (model_views_test.go) and the pool holds no room. On a
// failure it prints the seed and the operations, shrinks them, and prints
// the command that replays the shortest failing scenario.
//
//	go test -count=1 -run TestLifecycleModel ./test/e2e -v           # the short run
//	KILN_MODEL_SCENARIOS=2000 KILN_MODEL_BASE=$RANDOM go test -count=1 -timeout 0 -run TestLifecycleModel ./test/e2e
//	KILN_MODEL_SEED=42 go test -count=1 -run TestLifecycleModel ./test/e2e -v   # replay one seed
//
// Other knobs: KILN_MODEL_OPS (comma-separated operations that replace
// the seed's), KILN_MODEL_DROP (top-level nodes to leave out),
// KILN_MODEL_KNOWN (the known defects to avoid, comma-separated; empty:
// none), KILN_MODEL_SHRINK=0 (report without shrinking),
// KILN_MODEL_KEEPGOING=1 (play on after a failing scenario).

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

var (
	modelSeedFlag      = flag.Int64("model.seed", 0, "TestLifecycleModel: replay this seed alone (env KILN_MODEL_SEED)")
	modelScenariosFlag = flag.Int("model.scenarios", 0, "TestLifecycleModel: how many scenarios (env KILN_MODEL_SCENARIOS)")
)

// defaultModelScenarios is how many scenarios the short run plays.
const defaultModelScenarios = 12

// modelDeadline bounds every wait of the model test: for a run to end
// once nothing holds it, for a gate to wait, for an engine to exit.
const modelDeadline = 90 * time.Second

// knownDefects are the engine defects the model test has found and not
// yet seen fixed. Each one names the switch that keeps the generator (or
// the check) away from it, so that the short run passes on today's code;
// whoever fixes one deletes its line, and KILN_MODEL_KNOWN= (empty) runs
// with every check on. See avoidKnown and the checks that read it.
var knownDefects = map[string]bool{}

// scenario is one generated case: a workflow and the operations applied
// after its run starts.
type scenario struct {
	seed int64
	wf   genWorkflow
	ops  []string
}

// newScenario generates the scenario of seed.
func newScenario(seed int64) scenario {
	rng := rand.New(rand.NewSource(seed))
	sc := scenario{seed: seed, wf: genWorkflowFrom(rng)}
	sc.ops = genOps(rng, sc.wf)
	return sc
}

// avoidKnown changes sc so that it does not meet the known defects.
func avoidKnown(sc scenario, known map[string]bool) scenario {
	retried := false
	var ops []string
	for _, op := range sc.ops {
		cancel := op == "cancel" || op == "kill9cancel"
		if cancel && retried && sc.wf.OnExit && known["cancel-after-retry-leaves-exit-handler-pending"] {
			continue
		}
		retried = retried || op == "retry"
		ops = append(ops, op)
	}
	sc.ops = ops
	again := slices.ContainsFunc(sc.ops, func(op string) bool { return op == "retry" || strings.HasPrefix(op, "rerun:") })
	if again && known["retry-resets-tolerated-map-items"] {
		sc.wf.Nodes = slices.Clone(sc.wf.Nodes)
		for i := range sc.wf.Nodes {
			sc.wf.Nodes[i].MinRatio = 0
		}
	}
	return sc
}

// modelConfig is what the test runs: its seeds, the known defects, and
// the replay knobs.
type modelConfig struct {
	base   int64
	n      int
	replay bool // one seed given: KILN_MODEL_OPS and KILN_MODEL_DROP apply
	known  map[string]bool
	shrink bool
	// keepGoing plays the scenarios after a failing one too (KILN_MODEL_KEEPGOING=1).
	keepGoing bool
}

// readModelConfig reads the flags and the environment.
func readModelConfig(t *testing.T) modelConfig {
	cfg := modelConfig{
		base: 1, n: defaultModelScenarios, known: knownDefects, shrink: os.Getenv("KILN_MODEL_SHRINK") != "0",
		keepGoing: os.Getenv("KILN_MODEL_KEEPGOING") == "1",
	}
	if v := envInt(t, "KILN_MODEL_BASE"); v != 0 {
		cfg.base = v
	}
	seed := *modelSeedFlag
	if v := envInt(t, "KILN_MODEL_SEED"); v != 0 {
		seed = v
	}
	if seed != 0 {
		cfg.base, cfg.n, cfg.replay = seed, 1, true
	}
	if v := envInt(t, "KILN_MODEL_SCENARIOS"); v != 0 {
		cfg.n = int(v)
	}
	if *modelScenariosFlag != 0 {
		cfg.n = *modelScenariosFlag
	}
	if v, ok := os.LookupEnv("KILN_MODEL_KNOWN"); ok {
		cfg.known = map[string]bool{}
		for _, k := range splitList(v) {
			cfg.known[k] = true
		}
	}
	return cfg
}

// envInt reads an integer from the environment; 0 when unset.
func envInt(t *testing.T, name string) int64 {
	v := os.Getenv(name)
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	return slices.DeleteFunc(strings.Split(s, ","), func(x string) bool { return strings.TrimSpace(x) == "" })
}

func TestLifecycleModel(t *testing.T) {
	t.Parallel()
	cfg := readModelConfig(t)
	base := t.TempDir()
	for i := range cfg.n {
		sc := newScenario(cfg.base + int64(i))
		if cfg.replay {
			sc = replayKnobs(sc)
		}
		sc = avoidKnown(sc, cfg.known)
		start := time.Now()
		trace, err := playScenario(t, base, sc, cfg.known)
		t.Logf("seed %d: %d nodes, ops %v: %s (%s)", sc.seed, len(sc.wf.Nodes), sc.ops, outcome(err), time.Since(start).Round(time.Millisecond))
		if err != nil {
			reportFailure(t, base, sc, trace, err, cfg)
			if !cfg.keepGoing {
				return
			}
		}
	}
}

// outcome says ok or the error.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// replayKnobs applies KILN_MODEL_OPS and KILN_MODEL_DROP to sc.
func replayKnobs(sc scenario) scenario {
	if v, ok := os.LookupEnv("KILN_MODEL_OPS"); ok {
		sc.ops = splitList(v)
	}
	for _, name := range splitList(os.Getenv("KILN_MODEL_DROP")) {
		sc = sc.without(name)
	}
	if os.Getenv("KILN_MODEL_NOEXIT") == "1" {
		sc.wf.OnExit = false
	}
	return sc
}

// without returns sc without node name and the operations that name it.
func (sc scenario) without(name string) scenario {
	out := scenario{seed: sc.seed, wf: sc.wf.without(name)}
	for _, op := range sc.ops {
		if _, arg, _ := strings.Cut(op, ":"); arg != name {
			out.ops = append(out.ops, op)
		}
	}
	return out
}

// violation is a broken invariant; kind groups violations for shrinking.
type violation struct {
	kind, msg string
}

func (v *violation) Error() string { return v.kind + ": " + v.msg }

// violated returns a violation of kind.
func violated(kind, format string, args ...any) error {
	return &violation{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// kindOf is the kind of err: a violation's, else "error".
func kindOf(err error) string {
	var v *violation
	if errors.As(err, &v) {
		return v.kind
	}
	return "error"
}

// engineProc is a kiln process that drives a run: run, resume, retry or rerun.
type engineProc struct {
	what   string
	cmd    *exec.Cmd
	done   chan struct{}
	code   int
	killed bool
	log    string
}

// exited reports whether the process has exited.
func (e *engineProc) exited() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// kill kills the process with SIGKILL and waits for it.
func (e *engineProc) kill() {
	if !e.exited() {
		e.killed = true
		_ = e.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-e.done
}

// output is what the process printed.
func (e *engineProc) output() string {
	b, _ := os.ReadFile(e.log)
	return string(b)
}

// epoch is one stretch of a run's life, from its start (kiln run, rerun)
// or retry to its end.
type epoch struct {
	by         string
	fixed      bool        // the fix file existed when it began
	cancelled  bool        // a cancel was accepted
	stopped    bool        // a stop was accepted
	rejected   bool        // a gate's rejection was accepted
	cancelSent time.Time   // when the accepted cancel was sent
	end        apiv1.Phase // "" until it ended
}

// runModel is what the test knows of one run.
type runModel struct {
	id          apiv1.RunID
	eng         *engineProc
	epochs      []*epoch
	suspended   bool
	suspendSent time.Time
	decided     map[string]bool // gate waits decided by finish, by node and waiting time
	exitsSeen   int             // exit handler lines counted at the previous end
}

// last is the run's current epoch.
func (r *runModel) last() *epoch { return r.epochs[len(r.epochs)-1] }

// ended reports whether the current epoch has been seen to end.
func (r *runModel) ended() bool { return r.last().end != "" }

// driver plays one scenario against one kiln home.
type driver struct {
	t       *testing.T
	sc      scenario
	home    string
	dir     string
	p       modelPaths
	file    string
	runs    []*runModel
	cur     *runModel
	engines []*engineProc
	trace   []string
	known   map[string]bool
}

// note adds a line to the trace.
func (d *driver) note(format string, args ...any) {
	d.trace = append(d.trace, fmt.Sprintf(format, args...))
}

// playScenario plays sc in a fresh home under base and returns its trace
// and the first violation.
func playScenario(t *testing.T, base string, sc scenario, known map[string]bool) ([]string, error) {
	dir, err := os.MkdirTemp(base, "scenario-") //nolint:usetesting // removed as each scenario ends, not after thousands of them
	if err != nil {
		t.Fatal(err)
	}
	d := &driver{t: t, sc: sc, dir: dir, home: filepath.Join(dir, "home"), known: known}
	d.p = modelPaths{
		ledger: filepath.Join(dir, "ledger"), exits: filepath.Join(dir, "exits"),
		fix: filepath.Join(dir, "fix"), release: filepath.Join(dir, "release"),
	}
	defer d.cleanup()
	if err := os.Mkdir(d.home, 0o755); err != nil {
		t.Fatal(err)
	}
	err = d.play()
	return d.trace, err
}

// play starts the run, applies the operations, checking after each, and
// ends every run.
func (d *driver) play() error {
	if err := d.start(); err != nil {
		return err
	}
	for _, op := range d.sc.ops {
		d.note("op %s", op)
		if err := d.apply(op); err != nil {
			return err
		}
		if err := d.check(d.cur); err != nil {
			return err
		}
	}
	d.note("end: finish every run")
	for _, r := range d.runs {
		if err := d.finish(r); err != nil {
			return err
		}
	}
	for _, r := range d.runs {
		if err := d.check(r); err != nil {
			return err
		}
	}
	if err := d.checkViews(); err != nil {
		return err
	}
	return d.checkRoomFree()
}

// checkRoomFree checks that the pool holds no room once every run has
// ended: a task that asks for the whole machine starts within its
// admission timeout, instead of waiting for room an ended attempt kept.
func (d *driver) checkRoomFree() error {
	probe := filepath.Join(d.dir, "probe.yaml")
	doc := fmt.Sprintf("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: probe}\nspec:\n  tasks:\n"+
		"  - {name: whole, resources: {cpu: \"%d\"}, admissionTimeout: 60s, command: [\"true\"]}\n", runtime.NumCPU())
	if err := os.WriteFile(probe, []byte(doc), 0o644); err != nil {
		return err
	}
	res := kiln(d.t, d.home, "run", "-q", probe)
	d.note("probe for the whole machine: exit %d", res.code)
	if res.code != 0 {
		return violated("room-held", "every run ended, and a task asking for all %d CPUs did not start: %s", runtime.NumCPU(), strings.TrimSpace(res.stderr))
	}
	return nil
}

// cleanup kills the engines left, releases hanging tasks and removes the
// scenario's home and files.
func (d *driver) cleanup() {
	for _, e := range d.engines {
		e.kill()
	}
	_ = touch(d.p.release)
	removeHome(d.t, d.home)
	_ = os.RemoveAll(d.dir)
}

// touch creates the file at path.
func touch(path string) error { return os.WriteFile(path, nil, 0o644) }

// startEngine starts kiln with args in the background.
func (d *driver) startEngine(what string, args ...string) *engineProc {
	e := &engineProc{what: what, done: make(chan struct{}), log: filepath.Join(d.dir, fmt.Sprintf("engine-%d-%s.log", len(d.engines), what))}
	f, err := os.Create(e.log)
	if err != nil {
		d.t.Fatal(err)
	}
	e.cmd = exec.Command(kilnBin, append([]string{"--home", d.home}, args...)...)
	e.cmd.Stdout, e.cmd.Stderr = f, f
	if err := e.cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	go func() {
		err := e.cmd.Wait()
		f.Close()
		e.code = 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			e.code = ee.ExitCode()
		}
		close(e.done)
	}()
	d.engines = append(d.engines, e)
	return e
}

// describeRun reads run id.
func (d *driver) describeRun(id apiv1.RunID) (apiv1.Run, error) {
	detail, err := d.describeDetail(id)
	return detail.Run, err
}

// describeDetail reads run id and its events.
func (d *driver) describeDetail(id apiv1.RunID) (runDetail, error) {
	r := kiln(d.t, d.home, "describe", "run", string(id), "-o", "json")
	if r.code != 0 {
		return runDetail{}, violated("describe", "kiln describe run %s exited %d: %s", id, r.code, r.stderr)
	}
	var out runDetail
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		return runDetail{}, violated("describe", "kiln describe run %s -o json: %v", id, err)
	}
	return out, nil
}

// poll calls cond until it returns true or an error, or modelDeadline
// passes (a violation of kind "stuck" saying what it waited for).
func poll(what func() string, cond func() (bool, error)) error {
	deadline := time.Now().Add(modelDeadline)
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return violated("stuck", "waited %s for %s", modelDeadline, what())
		}
		<-time.After(50 * time.Millisecond)
	}
}

// start writes the workflow and runs it in the background.
func (d *driver) start() error {
	d.file = writeFile(d.t, d.dir, "model.yaml", d.sc.wf.yaml(d.p))
	e := d.startEngine("run", "run", "--cpus", "2", d.file)
	var id apiv1.RunID
	err := poll(func() string { return "the run to be created" }, func() (bool, error) {
		exited := e.exited() // before listing: an engine that exited has written the run
		if rs := runs(d.t, d.home); len(rs) > 0 {
			id = rs[0].ID
			return true, nil
		}
		if exited {
			return false, violated("submit", "kiln run exited %d before its run existed: %s", e.code, e.output())
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	d.cur = &runModel{id: id, eng: e, epochs: []*epoch{{by: "run"}}, decided: map[string]bool{}}
	d.runs = append(d.runs, d.cur)
	d.note("started run %s", id)
	return nil
}

// apply applies one operation to the current run.
func (d *driver) apply(op string) error {
	name, arg, _ := strings.Cut(op, ":")
	switch name {
	case "cancel":
		return d.cancel(d.cur, false)
	case "kill9cancel":
		return d.cancel(d.cur, true)
	case "stop":
		return d.stop(d.cur)
	case "kill9":
		return d.kill9(d.cur)
	case "suspend", "unsuspend":
		return d.suspend(d.cur, name == "suspend")
	case "approve", "reject", "signal":
		return d.decide(d.cur, name, arg)
	case "release":
		return touch(d.p.release)
	case "finish":
		return d.finish(d.cur)
	case "retry":
		return d.retry(d.cur)
	case "rerun":
		return d.rerun(d.cur, arg)
	case "gc":
		return d.gc()
	}
	return fmt.Errorf("unknown operation %q", op)
}

// refused checks that a command refused because the run has ended
// (KLN-4010), or, when also is given, for that reason; and that the run
// has indeed ended, noting its end.
func (d *driver) refused(r *runModel, what string, res result, also ...apiv1.Code) error {
	codes := append([]apiv1.Code{apiv1.CodeRunPhase}, also...)
	if res.code == 0 || !slices.ContainsFunc(codes, func(c apiv1.Code) bool { return strings.Contains(res.stderr, string(c)) }) {
		return violated(what, "kiln %s exited %d: %s%s; want 0, or a refusal %v", what, res.code, res.stdout, res.stderr, codes)
	}
	run, err := d.describeRun(r.id)
	if err != nil {
		return err
	}
	if !run.Status.Phase.Done() {
		if len(also) > 0 {
			return nil
		}
		return violated(what, "kiln %s refused with %s, but the run is %s", what, apiv1.CodeRunPhase, run.Status.Phase)
	}
	return d.sawEnd(r, run)
}

// cancel cancels the run; with noEngine, after killing its engine, so
// that kiln cancel cancels it itself. An accepted cancel ends the run
// without help.
func (d *driver) cancel(r *runModel, noEngine bool) error {
	if noEngine && r.eng != nil {
		r.eng.kill()
		d.note("killed %s", r.eng.what)
	}
	sent := time.Now()
	res := kiln(d.t, d.home, "cancel", string(r.id))
	if res.code != 0 {
		d.note("cancel refused: %s", strings.TrimSpace(res.stderr))
		return d.refused(r, "cancel", res)
	}
	r.last().cancelled, r.last().cancelSent = true, sent
	d.note("cancel accepted")
	return d.awaitEnd(r, false)
}

// stop stops the run (argo stop): an accepted stop ends it Failed, its
// exit handler run once, without help.
func (d *driver) stop(r *runModel) error {
	res := kiln(d.t, d.home, "stop", string(r.id))
	if res.code != 0 {
		d.note("stop refused: %s", strings.TrimSpace(res.stderr))
		return d.refused(r, "stop", res)
	}
	r.last().stopped = true
	d.note("stop accepted")
	return d.awaitEnd(r, false)
}

// kill9 kills the run's engine with SIGKILL and, unless the run ended,
// resumes it.
func (d *driver) kill9(r *runModel) error {
	if r.eng == nil || r.eng.exited() {
		d.note("no engine to kill")
		return nil
	}
	r.eng.kill()
	run, err := d.describeRun(r.id)
	if err != nil {
		return err
	}
	if run.Status.Phase.Done() {
		d.note("killed %s; the run had ended (%s)", r.eng.what, run.Status.Phase)
		return d.sawEnd(r, run)
	}
	d.note("killed %s with the run %s; resume", r.eng.what, run.Status.Phase)
	r.eng = d.startEngine("resume", "resume", string(r.id))
	return nil
}

// suspend suspends or unsuspends the run.
func (d *driver) suspend(r *runModel, on bool) error {
	verb := map[bool]string{true: "suspend", false: "unsuspend"}[on]
	sent := time.Now()
	res := kiln(d.t, d.home, verb, string(r.id))
	if res.code != 0 {
		d.note("%s refused: %s", verb, strings.TrimSpace(res.stderr))
		return d.refused(r, verb, res)
	}
	d.note("%s accepted", verb)
	if on && !r.suspended {
		r.suspended, r.suspendSent = true, sent
		return nil
	}
	if !on && r.suspended {
		r.suspended = false
		return d.checkNoStart(r, "suspend", r.suspendSent, sent, r.last().stopped)
	}
	return nil
}

// gateWaiting reports whether node n is a gate waiting for its input.
func gateWaiting(n *apiv1.NodeStatus) bool {
	return n != nil && n.Phase == apiv1.PhaseRunning && n.Gate != nil && n.Gate.Decision == "" && n.Gate.WaitingSince != nil
}

// decide waits until gate waits (or ended) and approves, rejects or
// signals it. A gate that no longer waits must refuse.
func (d *driver) decide(r *runModel, verb, gate string) error {
	if r.suspended {
		d.note("%s skipped: the run is suspended", verb)
		return nil
	}
	var waiting bool
	var key string
	err := poll(func() string { return "gate " + gate + " to wait or end" }, func() (bool, error) {
		run, err := d.describeRun(r.id)
		n := run.Status.Node(gate)
		if waiting = gateWaiting(n); waiting {
			key = gate + " " + n.Gate.WaitingSince.String()
		}
		return waiting || run.Status.Phase.Done() || n == nil || n.Phase.Done(), err
	})
	if err != nil {
		return err
	}
	args := []string{verb, string(r.id), gate}
	if verb == "signal" {
		args = append(args, "v")
	}
	sent := r.decided[key]
	res := kiln(d.t, d.home, args...)
	d.note("%s %s (waiting %v, sent before %v): exit %d %s", verb, gate, waiting, sent, res.code, strings.TrimSpace(res.stderr))
	switch {
	case res.code == 0 && (!waiting || sent):
		return violated("gate", "kiln %s of gate %s exited 0; it was not waiting, or had its input already", verb, gate)
	case res.code == 0:
		r.decided[key] = true
		r.last().rejected = r.last().rejected || verb == "reject"
	case !waiting:
		return d.refused(r, verb, res, apiv1.CodeNotWaiting)
	case sent && strings.Contains(res.stderr, string(apiv1.CodeNotWaiting)):
		return nil
	default:
		return d.stillWaiting(r, verb, gate, res)
	}
	return nil
}

// stillWaiting checks a decision refused while the gate waited: it must
// no longer wait.
func (d *driver) stillWaiting(r *runModel, verb, gate string, res result) error {
	run, err := d.describeRun(r.id)
	if err != nil {
		return err
	}
	if gateWaiting(run.Status.Node(gate)) {
		return violated("gate", "kiln %s of waiting gate %s exited %d: %s", verb, gate, res.code, res.stderr)
	}
	return nil
}

// finish removes what holds the run (hanging tasks, suspension, gates,
// which it approves or signals) and waits for it to end.
func (d *driver) finish(r *runModel) error {
	if r.ended() {
		return nil
	}
	if err := touch(d.p.release); err != nil {
		return err
	}
	if r.suspended {
		if err := d.suspend(r, false); err != nil || r.ended() {
			return err
		}
	}
	return d.awaitEnd(r, true)
}

// awaitEnd waits for the run to end; with help, deciding the gates that
// wait on the way.
func (d *driver) awaitEnd(r *runModel, help bool) error {
	var run apiv1.Run
	err := poll(func() string { return fmt.Sprintf("run %s to end: %s", r.id, summary(run)) }, func() (bool, error) {
		var err error
		if run, err = d.describeRun(r.id); err != nil || run.Status.Phase.Done() {
			return err == nil, err
		}
		if r.eng != nil && r.eng.exited() && !r.eng.killed {
			if run, err = d.describeRun(r.id); err == nil && !run.Status.Phase.Done() {
				return false, violated("engine", "kiln %s exited %d with the run %s: %s", r.eng.what, r.eng.code, run.Status.Phase, r.eng.output())
			}
			return err == nil, err
		}
		if help {
			d.decideWaiting(r, run)
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	return d.sawEnd(r, run)
}

// decideWaiting approves or signals, once, each top-level gate that waits.
func (d *driver) decideWaiting(r *runModel, run apiv1.Run) {
	for _, n := range run.Status.Nodes {
		if n.Parent != "" || !gateWaiting(&n) || n.Gate.Kind == "sleep" {
			continue
		}
		key := n.Name + n.Gate.WaitingSince.String()
		if r.decided[key] {
			continue
		}
		r.decided[key] = true
		args := []string{"approve", string(r.id), n.Name}
		if n.Gate.Kind == "signal" {
			args = []string{"signal", string(r.id), n.Name, "v"}
		}
		res := kiln(d.t, d.home, args...)
		d.note("finish: %s %s: exit %d", args[0], n.Name, res.code)
	}
}

// retry ends the run, then, unless it succeeded (when retry must
// refuse), creates the fix file and retries it.
func (d *driver) retry(r *runModel) error {
	if err := d.finish(r); err != nil {
		return err
	}
	before, err := d.describeRun(r.id)
	if err != nil {
		return err
	}
	if before.Status.Phase == apiv1.PhaseSucceeded {
		res := kiln(d.t, d.home, "retry", string(r.id))
		d.note("retry of a Succeeded run: exit %d", res.code)
		if res.code == 0 || !strings.Contains(res.stderr, string(apiv1.CodeRunPhase)) {
			return violated("retry", "kiln retry of a Succeeded run exited %d: %s; want %s", res.code, res.stderr, apiv1.CodeRunPhase)
		}
		return nil
	}
	if err := touch(d.p.fix); err != nil {
		return err
	}
	r.eng = d.startEngine("retry", "retry", string(r.id))
	r.suspended = false // a retry drops a suspension asked before the run ended
	r.epochs = append(r.epochs, &epoch{by: "retry", fixed: true})
	d.note("retry of a %s run started", before.Status.Phase)
	return d.awaitRestart(r, before)
}

// awaitRestart waits until a retried run shows its new life: it no
// longer has the phase and end it had, or its engine exited.
func (d *driver) awaitRestart(r *runModel, before apiv1.Run) error {
	return poll(func() string { return "the retried run to start again" }, func() (bool, error) {
		exited := r.eng.exited() // before describing: an engine that exited has written the run
		run, err := d.describeRun(r.id)
		switch {
		case err != nil:
			return false, err
		case !run.Status.Phase.Done() || !sameTime(run.Status.FinishedAt, before.Status.FinishedAt):
			return true, nil
		case exited:
			return false, violated("retry", "kiln retry exited %d and the run is still %s: %s", r.eng.code, run.Status.Phase, r.eng.output())
		}
		return false, nil
	})
}

// sameTime reports whether a and b are the same time, or both nil.
func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// rerun ends the run, creates the fix file and reruns it from node; the
// new run becomes the current one.
func (d *driver) rerun(r *runModel, node string) error {
	if err := d.finish(r); err != nil {
		return err
	}
	if err := touch(d.p.fix); err != nil {
		return err
	}
	known := map[apiv1.RunID]bool{}
	for _, m := range d.runs {
		known[m.id] = true
	}
	e := d.startEngine("rerun", "rerun", string(r.id), "--from", node)
	var id apiv1.RunID
	err := poll(func() string { return "the rerun to be created" }, func() (bool, error) {
		exited := e.exited() // before listing: an engine that exited has written the run
		for _, m := range runs(d.t, d.home) {
			if !known[m.ID] {
				id = m.ID
				return true, nil
			}
		}
		if exited {
			return false, violated("rerun", "kiln rerun %s --from %s exited %d with no new run: %s", r.id, node, e.code, e.output())
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	d.cur = &runModel{id: id, eng: e, epochs: []*epoch{{by: "rerun", fixed: true}}, decided: map[string]bool{}}
	d.runs = append(d.runs, d.cur)
	d.note("rerun %s of %s from %s started", id, r.id, node)
	return nil
}

// gc collects once: no run has a TTL or a history limit, so every run
// must still be there.
func (d *driver) gc() error {
	res := kiln(d.t, d.home, "gc")
	d.note("gc: exit %d: %s", res.code, strings.TrimSpace(res.stdout))
	if res.code != 0 {
		return violated("gc", "kiln gc exited %d: %s", res.code, res.stderr)
	}
	for _, r := range d.runs {
		if _, err := d.describeRun(r.id); err != nil {
			return violated("gc", "after kiln gc: %v", err)
		}
	}
	return nil
}

// summary is the run's phase and its unfinished nodes, for messages.
func summary(run apiv1.Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", run.Status.Phase)
	for _, n := range run.Status.Nodes {
		if !n.Phase.Done() {
			fmt.Fprintf(&b, " %s=%s(%d attempts)", n.Name, n.Phase, len(n.Attempts))
		}
	}
	return b.String()
}

// reportFailure prints the failing scenario, shrinks it and prints the
// shortest one that still fails, and how to replay it.
func reportFailure(t *testing.T, base string, sc scenario, trace []string, err error, cfg modelConfig) {
	t.Errorf("seed %d failed: %v\noperations: %v\ntrace:\n  %s\nworkflow:\n%s", sc.seed, err, sc.ops,
		strings.Join(trace, "\n  "), sc.wf.yaml(modelPaths{ledger: "LEDGER", exits: "EXITS", fix: "FIX", release: "RELEASE"}))
	small, smallTrace, smallErr := sc, trace, err
	if cfg.shrink {
		small, smallTrace, smallErr = shrinkScenario(t, base, sc, trace, err, cfg.known)
	}
	t.Errorf("shortest failing scenario: seed %d, operations %v, nodes %v, onExit %v: %v\ntrace:\n  %s\nworkflow:\n%s\nreplay: %s",
		small.seed, small.ops, nodeNames(small.wf), small.wf.OnExit, smallErr, strings.Join(smallTrace, "\n  "),
		small.wf.yaml(modelPaths{ledger: "LEDGER", exits: "EXITS", fix: "FIX", release: "RELEASE"}), replayCommand(sc, small, cfg.known))
}

// nodeNames lists the workflow's top-level nodes.
func nodeNames(w genWorkflow) []string {
	var out []string
	for _, nd := range w.Nodes {
		out = append(out, nd.Name)
	}
	return out
}

// replayCommand is the command that replays small, shrunk from sc, with
// the known defects known avoided.
func replayCommand(sc, small scenario, known map[string]bool) string {
	var drop []string
	for _, nd := range sc.wf.Nodes {
		if small.wf.node(nd.Name) == nil {
			drop = append(drop, nd.Name)
		}
	}
	var avoided []string
	for k, on := range known {
		if on {
			avoided = append(avoided, k)
		}
	}
	slices.Sort(avoided)
	env := fmt.Sprintf("KILN_MODEL_KNOWN=%s KILN_MODEL_SEED=%d KILN_MODEL_OPS=%s", strings.Join(avoided, ","), sc.seed, strings.Join(small.ops, ","))
	if len(drop) > 0 {
		env += " KILN_MODEL_DROP=" + strings.Join(drop, ",")
	}
	if sc.wf.OnExit && !small.wf.OnExit {
		env += " KILN_MODEL_NOEXIT=1"
	}
	return env + " go test -count=1 -run TestLifecycleModel ./test/e2e -v"
}

// maxShrinkPlays and maxShrinkTime bound the plays one shrink may spend.
const (
	maxShrinkPlays = 30
	maxShrinkTime  = 5 * time.Minute
)

// shrinkScenario drops operations, then nodes, then the exit handler,
// one at a time, keeping each drop after which the scenario still fails
// with a violation of the same kind.
func shrinkScenario(t *testing.T, base string, sc scenario, trace []string, last error, known map[string]bool) (scenario, []string, error) {
	kind, plays, deadline := kindOf(last), 0, time.Now().Add(maxShrinkTime)
	try := func(c scenario) bool {
		if plays >= maxShrinkPlays || time.Now().After(deadline) {
			return false
		}
		plays++
		tr, err := playScenario(t, base, c, known)
		t.Logf("shrink %d: ops %v nodes %v onExit %v: %s", plays, c.ops, nodeNames(c.wf), c.wf.OnExit, outcome(err))
		if err == nil || kindOf(err) != kind {
			return false
		}
		trace, last = tr, err
		return true
	}
	for changed := true; changed; {
		changed = false
		for _, c := range candidates(sc) {
			if try(c) {
				sc, changed = c, true
				break
			}
		}
	}
	return sc, trace, last
}

// candidates are sc's one-step reductions: without one operation, without
// one node, without its exit handler.
func candidates(sc scenario) []scenario {
	var out []scenario
	for i := range sc.ops {
		c := sc
		c.ops = slices.Delete(slices.Clone(sc.ops), i, i+1)
		out = append(out, c)
	}
	for _, nd := range sc.wf.Nodes {
		if len(sc.wf.Nodes) > 1 {
			out = append(out, sc.without(nd.Name))
		}
	}
	if sc.wf.OnExit {
		c := sc
		c.wf.OnExit = false
		out = append(out, c)
	}
	return out
}
