package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/local"
	"kiln.dev/kiln/internal/node/builtin"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/sqlite"
	"kiln.dev/kiln/internal/workflow"
)

// TestMain doubles as the supervisor binary for the local backend.
func TestMain(m *testing.M) {
	local.RunSandboxIfAsked()
	if home := os.Getenv("KILN_TEST_SUPERVISOR_HOME"); home != "" {
		if err := local.Serve(context.Background(), local.ServeConfig{Home: home, IdleTimeout: time.Minute}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// engine is a controller on a real SQLite store and the real local
// backend, admitting against the supervisor's shared ledger, as kiln does.
type engine struct {
	*Controller
	*Runs   // the controller's, for the tests to submit and wait
	store   *sqlite.Store
	backend *local.Backend
	pool    *local.Pool
	home    string
	stop    func() // stops the engine; attempts and the supervisor go on
}

func newEngine(t *testing.T, cpus int64, opts ...func(*Config)) *engine {
	t.Helper()
	home := t.TempDir()
	st, err := sqlite.Open(t.Context(), filepath.Join(home, "kiln.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := startEngine(t, home, st, cpus, "test-"+filepath.Base(home), opts...)
	t.Cleanup(func() {
		e.stop()
		stopSupervisor(t, home)
		st.Close()
	})
	return e
}

// stopSupervisor kills home's supervisor, if one runs, and waits until it
// is gone, so that nothing writes to home while the test removes it.
func stopSupervisor(t *testing.T, home string) {
	pid := local.SupervisorPID(home)
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; {
		if time.Now().After(deadline) {
			t.Errorf("supervisor %d of %s did not die", pid, home)
			return
		}
		<-time.After(5 * time.Millisecond)
	}
}

// sibling starts a second engine on e's home and store, as a second kiln
// process on the same KILN_HOME would be.
func (e *engine) sibling(t *testing.T, cpus int64, owner string) *engine {
	t.Helper()
	return startEngine(t, e.home, e.store, cpus, owner)
}

func startEngine(t *testing.T, home string, st *sqlite.Store, cpus int64, owner string, opts ...func(*Config)) *engine {
	t.Helper()
	be := local.New(local.Config{
		Home:              home,
		SupervisorCommand: []string{"/usr/bin/env", "KILN_TEST_SUPERVISOR_HOME=" + home, os.Args[0]},
	})
	// Start the supervisor now, so that none is still starting when the
	// test ends and stopSupervisor looks for it.
	if _, err := be.Supervisor(t.Context()); err != nil {
		t.Fatal(err)
	}
	pool := be.Pool(resource.Request{MilliCPU: cpus * 1000, Memory: 1 << 40})
	cfg := Config{
		Store: st, Backend: be, Pool: pool,
		Handlers: builtin.Registry(), Owner: owner, Grace: 200 * time.Millisecond, Env: os.Environ(),
	}
	for _, o := range opts {
		o(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { c.Run(ctx); close(stopped) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-stopped
			be.Close()
		})
	}
	t.Cleanup(stop)
	return &engine{Controller: c, Runs: c.Runs(), store: st, backend: be, pool: pool, home: home, stop: stop}
}

// submit compiles a workflow written in YAML and submits it.
func (e *engine) submit(t *testing.T, spec string, params map[string]string) apiv1.RunID {
	t.Helper()
	src := filepath.Join(t.TempDir(), "wf.yaml")
	text := "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: wf}\n" + spec
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, err := workflow.ReadFiles([]string{src})
	if err != nil {
		t.Fatal(err)
	}
	wf, err := workflow.DecodeWorkflow(&docs[0])
	if err != nil {
		t.Fatal(err)
	}
	plan, err := workflow.Compile(&docs[0], wf, nil)
	if err != nil {
		t.Fatal(err)
	}
	values, err := workflow.ResolveParams(&docs[0], wf, params)
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.Submit(t.Context(), SubmitParams{Plan: plan, Params: values, Source: src})
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if run.Status.Phase != apiv1.PhasePending || len(run.Status.Nodes) != len(plan.Tasks) || run.Source != src {
		t.Fatalf("Submit returned %s with %d nodes from %q, want the saved run: Pending, %d nodes, from %s",
			run.Status.Phase, len(run.Status.Nodes), run.Source, len(plan.Tasks), src)
	}
	return run.ID
}

// wait waits for run id to finish and returns it as stored.
func (e *engine) wait(t *testing.T, id apiv1.RunID) *apiv1.Run {
	t.Helper()
	select {
	case <-e.Done(id):
	case <-time.After(60 * time.Second):
		run, _ := e.store.GetRun(t.Context(), id)
		var b strings.Builder
		if run != nil {
			for _, n := range run.Status.Nodes {
				fmt.Fprintf(&b, "\n  %s: %s %s (%d attempts)", n.Name, n.Phase, n.Message, len(n.Attempts))
			}
		}
		t.Fatalf("run %s did not finish:%s", id, b.String())
	}
	run, err := e.store.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func nodeOf(run *apiv1.Run, name string) apiv1.NodeStatus {
	for _, n := range run.Status.Nodes {
		if n.Name == name {
			return n
		}
	}
	return apiv1.NodeStatus{}
}

func phases(run *apiv1.Run) map[string]apiv1.Phase {
	out := map[string]apiv1.Phase{"": run.Status.Phase}
	for _, n := range run.Status.Nodes {
		out[n.Name] = n.Phase
	}
	return out
}

func TestDiamondPassesOutputsDownstream(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	out := filepath.Join(t.TempDir(), "result")
	id := e.submit(t, `spec:
  params: [{name: greeting, default: hello}]
  tasks:
  - name: a
    command: [sh, -c, 'printf "%s world" "$0" > $KILN_OUTPUTS/msg; touch $KILN_OUTPUTS/data.txt', '{{params.greeting}}']
    outputs: {parameters: [{name: msg}], artifacts: [{name: file, path: data.txt}]}
  - name: b
    dependsOn: [a]
    command: [sh, -c, 'echo "b saw: $0" > $KILN_OUTPUTS/v', '{{tasks.a.outputs.parameters.msg}}']
    outputs: {parameters: [{name: v}]}
  - name: c
    dependsOn: [a]
    command: [sh, -c, 'echo "c ran"']
  - name: d
    dependsOn: [b, c]
    command: [sh, -c, 'echo "$0|$1" > `+out+`', '{{tasks.b.outputs.parameters.v}}', '{{tasks.a.outputs.artifacts.file}}']
`, map[string]string{"greeting": "it's; $(rm -rf /)"})
	run := e.wait(t, id)
	if run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s: %s %s", id, run.Status.Phase, run.Status.Message)
	}
	got, _ := os.ReadFile(out)
	wantArtifact := filepath.Join(e.home, "runs", string(id), "a", "1", "outputs", "data.txt")
	if want := "b saw: it's; $(rm -rf /) world|" + wantArtifact + "\n"; string(got) != want {
		t.Errorf("d wrote %q, want %q", got, want)
	}
	if n := nodeOf(run, "a"); len(n.Attempts) != 1 || n.Attempts[0].ID != string(id)+"/a/1" || *n.Attempts[0].ExitCode != 0 {
		t.Errorf("a's attempts = %+v", n.Attempts)
	}
}

func TestRetriesUntilSuccess(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	counter := filepath.Join(t.TempDir(), "count")
	id := e.submit(t, `spec:
  tasks:
  - name: flaky
    command: [sh, -c, 'echo x >> `+counter+`; test $(wc -l < `+counter+`) -ge 3']
    retries: {limit: 3, backoff: {duration: 10ms, factor: 2}}
`, nil)
	run := e.wait(t, id)
	n := nodeOf(run, "flaky")
	if run.Status.Phase != apiv1.PhaseSucceeded || len(n.Attempts) != 3 {
		t.Fatalf("run %s with %d attempts, want Succeeded on the third: %+v", run.Status.Phase, len(n.Attempts), n)
	}
	if n.Attempts[0].Phase != apiv1.PhaseFailed || n.Attempts[0].Code != apiv1.CodeExit {
		t.Errorf("first attempt = %+v, want Failed with %s", n.Attempts[0], apiv1.CodeExit)
	}
}

func TestTaskRetriesCountsTheRetriesBeforeThisAttempt(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 1)
	seen := filepath.Join(t.TempDir(), "seen")
	id := e.submit(t, `spec:
  tasks:
  - name: flaky
    command: [sh, -c, 'echo "{{task.retries}}/{{task.attempt}}" >> `+seen+`; test {{task.retries}} -ge 2']
    retries: {limit: 3, backoff: {duration: 10ms}}
`, nil)
	run := e.wait(t, id)
	if run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s, want Succeeded on the third attempt (retries 2)", run.Status.Phase)
	}
	got, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	if want := "0/1\n1/2\n2/3\n"; string(got) != want {
		t.Errorf("the attempts saw %q, want %q", got, want)
	}
}

func TestFailFastLetsRunningTasksFinish(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	marker := filepath.Join(t.TempDir(), "slow-finished")
	id := e.submit(t, `spec:
  tasks:
  - {name: bad, command: [sh, -c, 'exit 7']}
  - {name: slow, command: [sh, -c, 'sleep 0.3; touch `+marker+`']}
  - {name: later, command: ['true']}
  - {name: after-bad, dependsOn: [bad], command: ['true']}
`, nil)
	run := e.wait(t, id)
	want := map[string]apiv1.Phase{
		"": apiv1.PhaseFailed, "bad": apiv1.PhaseFailed, "slow": apiv1.PhaseSucceeded,
		"later": apiv1.PhaseSkipped, "after-bad": apiv1.PhaseSkipped,
	}
	for k, v := range want {
		if got := phases(run)[k]; got != v {
			t.Errorf("phase of %q = %s, want %s", k, got, v)
		}
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("the running task was not let finish")
	}
	if !strings.Contains(run.Status.Message, "task bad failed") || run.Status.Code != apiv1.CodeExit {
		t.Errorf("run message = %s %q, want it to name task bad", run.Status.Code, run.Status.Message)
	}
}

func TestWithoutFailFastIndependentBranchesContinue(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 1)
	id := e.submit(t, `spec:
  failFast: false
  tasks:
  - {name: bad, command: [sh, -c, 'exit 1']}
  - {name: child, dependsOn: [bad], command: ['true']}
  - {name: other, command: ['true']}
  - {name: other-child, dependsOn: [other], command: ['true']}
`, nil)
	run := e.wait(t, id)
	want := map[string]apiv1.Phase{
		"": apiv1.PhaseFailed, "bad": apiv1.PhaseFailed, "child": apiv1.PhaseSkipped,
		"other": apiv1.PhaseSucceeded, "other-child": apiv1.PhaseSucceeded,
	}
	for k, v := range want {
		if got := phases(run)[k]; got != v {
			t.Errorf("phase of %q = %s, want %s", k, got, v)
		}
	}
	if nodeOf(run, "child").Code != apiv1.CodeUpstreamFailed {
		t.Errorf("child code = %s, want %s", nodeOf(run, "child").Code, apiv1.CodeUpstreamFailed)
	}
}

func TestTimeoutAndMissingCommand(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	id := e.submit(t, `spec:
  failFast: false
  tasks:
  - {name: sleepy, command: [sleep, "60"], timeout: 200ms}
  - {name: missing, command: [no-such-program-kiln], retries: {limit: 3}}
`, nil)
	run := e.wait(t, id)
	sleepy, missing := nodeOf(run, "sleepy"), nodeOf(run, "missing")
	if sleepy.Phase != apiv1.PhaseFailed || sleepy.Code != apiv1.CodeAttemptTimeout {
		t.Errorf("sleepy = %s %s, want Failed %s", sleepy.Phase, sleepy.Code, apiv1.CodeAttemptTimeout)
	}
	if missing.Code != apiv1.CodeCommandNotFound || len(missing.Attempts) != 1 || !strings.Contains(missing.Message, "no-such-program-kiln") {
		t.Fatalf("missing = %+v, want one attempt failing with %s naming the command", missing, apiv1.CodeCommandNotFound)
	}
	if a := missing.Attempts[0]; a.ExitCode != nil || a.Signal != "" {
		t.Errorf("the attempt of a command that never ran has exit code %v, signal %q; want neither", *a.ExitCode, a.Signal)
	}
}

func TestCancelStopsRunningTasks(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 1)
	started := filepath.Join(t.TempDir(), "started")
	id := e.submit(t, `spec:
  tasks:
  - {name: long, command: [sh, -c, 'touch `+started+`; sleep 60']}
  - {name: never, dependsOn: [long], command: ['true']}
`, nil)
	for deadline := time.Now().Add(20 * time.Second); ; {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("task never started")
		}
		<-time.After(5 * time.Millisecond)
	}
	if err := e.Cancel(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	run := e.wait(t, id)
	want := map[string]apiv1.Phase{"": apiv1.PhaseCancelled, "long": apiv1.PhaseCancelled, "never": apiv1.PhaseSkipped}
	for k, v := range want {
		if got := phases(run)[k]; got != v {
			t.Errorf("phase of %q = %s, want %s", k, got, v)
		}
	}
}

func TestPoolLimitsConcurrency(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	log := filepath.Join(t.TempDir(), "log")
	task := func(name string) string {
		return `  - {name: ` + name + `, command: [sh, -c, 'echo start >> ` + log + `; sleep 0.05; echo end >> ` + log + `']}` + "\n"
	}
	id := e.submit(t, "spec:\n  tasks:\n"+task("a")+task("b")+task("c")+task("d")+task("e"), nil)
	if run := e.wait(t, id); run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s: %s", run.Status.Phase, run.Status.Message)
	}
	if most := maxConcurrent(t, log); most != 2 {
		t.Errorf("at most %d tasks ran at once on a pool of 2 CPUs, want 2", most)
	}
	events, err := e.store.ListEvents(t.Context(), store.ListEventsParams{Run: id})
	if err != nil {
		t.Fatal(err)
	}
	waited := 0
	for _, ev := range events {
		if ev.Reason == "WaitingForResources" && strings.Contains(ev.Message, "needs cpu 1") {
			waited++
		}
	}
	if waited == 0 {
		t.Error("no task recorded why it waited for resources")
	}
}

func TestTaskLargerThanPoolIsRejected(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	src := "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: big}\nspec:\n  tasks:\n  - {name: huge, command: ['true'], resources: {cpu: 64}}\n"
	docs, _ := workflow.Read("big.yaml", strings.NewReader(src))
	wf, _ := workflow.DecodeWorkflow(&docs[0])
	plan, err := workflow.Compile(&docs[0], wf, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Submit(t.Context(), SubmitParams{Plan: plan, Source: "big.yaml"})
	if apiv1.CodeOf(err) != apiv1.CodeTooLarge || !strings.Contains(err.Error(), "spec.tasks[0].resources") {
		t.Fatalf("Submit = %v, want %s naming the field", err, apiv1.CodeTooLarge)
	}
	runs, _ := e.store.ListRuns(t.Context(), store.ListRunsParams{})
	if len(runs) != 0 {
		t.Errorf("a rejected submit left %d runs in the store", len(runs))
	}
}

func fmtSscan(s string, v *int) (int, error) { return fmt.Sscan(s, v) }

func TestRetryAfterFailureRunsOnlyWhatDidNotSucceed(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	dir := t.TempDir()
	fixed := filepath.Join(dir, "fixed")
	id := e.submit(t, `spec:
  tasks:
  - {name: make, command: [sh, -c, 'echo made >> `+dir+`/made; echo 7 > $KILN_OUTPUTS/count'], outputs: {parameters: [{name: count}]}}
  - {name: use, dependsOn: [make], command: [sh, -c, 'test -e `+fixed+` && test "$0" = 7', '{{tasks.make.outputs.parameters.count}}'], retries: {limit: 1}}
  - {name: after, dependsOn: [use], command: ["true"]}
`, nil)
	if run := e.wait(t, id); run.Status.Phase != apiv1.PhaseFailed || len(nodeOf(run, "use").Attempts) != 2 {
		t.Fatalf("first try: %s, use has %d attempts; want Failed after 2", run.Status.Phase, len(nodeOf(run, "use").Attempts))
	}
	if err := os.WriteFile(fixed, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.Retry(t.Context(), id, apiv1.RetryRequest{}); err != nil {
		t.Fatal(err)
	}
	run := e.wait(t, id)
	if run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("retried run: %s %s", run.Status.Phase, run.Status.Message)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "made")); string(b) != "made\n" {
		t.Errorf("the task that had succeeded ran again: %q", b)
	}
	use := nodeOf(run, "use")
	if len(use.Attempts) != 3 || use.AttemptBase != 2 || use.Attempts[2].ID != string(id)+"/use/3" {
		t.Errorf("use: %d attempts, base %d; want a third attempt after a base of 2", len(use.Attempts), use.AttemptBase)
	}
	if err := e.Retry(t.Context(), id, apiv1.RetryRequest{}); apiv1.CodeOf(err) != apiv1.CodeRunPhase {
		t.Errorf("retrying a succeeded run = %v, want %s", err, apiv1.CodeRunPhase)
	}
}
