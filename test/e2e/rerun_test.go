package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// rerunBench is a workflow whose tasks append their own name to a
// ledger: prep passes a parameter (word) and an artifact (data, which
// holds the ID of the run that wrote it) to train, which writes what it
// read to seen; eval follows train; side stands alone; onExit's notify
// ends every run that has it.
type rerunBench struct {
	home, dir, ledger, seen, file string
}

func newRerunBench(t *testing.T, home string) *rerunBench {
	t.Helper()
	dir := t.TempDir()
	b := &rerunBench{home: home, dir: dir, ledger: filepath.Join(dir, "ledger"), seen: filepath.Join(dir, "seen")}
	b.file = b.write(t, "train", `test ! -e `+filepath.Join(dir, "broken")+``)
	return b
}

// write writes the workflow, with train's name in the ledger and its
// gate (a command that must succeed) as given, and returns its path.
func (b *rerunBench) write(t *testing.T, trainName, gate string) string {
	t.Helper()
	return writeFile(t, b.dir, "ledger.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: ledger}
spec:
  params:
  - {name: greeting, default: "hello"}
  tasks:
  - name: prep
    command: [sh, -c, 'set -e; echo prep >> `+b.ledger+`; echo "{{params.greeting}}-prep" > $KILN_OUTPUTS/word; echo "data-of-$KILN_RUN_ID" > $KILN_OUTPUTS/data.txt']
    outputs: {parameters: [{name: word}], artifacts: [{name: data, path: data.txt}]}
  - name: train
    dependsOn: [prep]
    command: [sh, -c, 'set -e; echo `+trainName+` >> `+b.ledger+`; `+gate+`; echo "word={{tasks.prep.outputs.parameters.word}} greeting={{params.greeting}} $(cat {{tasks.prep.outputs.artifacts.data}})" > `+b.seen+`']
  - name: eval
    dependsOn: [train]
    command: [sh, -c, 'set -e; echo eval >> `+b.ledger+`']
  - name: side
    command: [sh, -c, 'set -e; echo side >> `+b.ledger+`']
  onExit:
  - name: notify
    command: [sh, -c, 'set -e; echo notify >> `+b.ledger+`']
`)
}

// ran returns the tasks the ledger names, sorted, and empties it.
func (b *rerunBench) ran(t *testing.T) []string {
	t.Helper()
	if _, err := os.Stat(b.ledger); os.IsNotExist(err) {
		return nil
	}
	got := sortedLines(t, b.ledger)
	if err := os.Remove(b.ledger); err != nil {
		t.Fatal(err)
	}
	return got
}

// seenLine is what train last read.
func (b *rerunBench) seenLine(t *testing.T) string {
	t.Helper()
	got, err := os.ReadFile(b.seen)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(got))
}

// rerun runs kiln rerun with args (with env, when not nil), wants exit 0
// and returns the new run, described.
func (b *rerunBench) rerun(t *testing.T, env []string, args ...string) apiv1.Run {
	t.Helper()
	r := kilnWithEnv(t, env, b.home, append([]string{"rerun"}, args...)...)
	if r.code != 0 {
		t.Fatalf("kiln rerun %v exited %d:\n%s%s", args, r.code, r.stdout, r.stderr)
	}
	id := strings.Fields(r.stdout)[0]
	if !strings.Contains(r.stdout, id+" reruns "+args[0]) || !strings.Contains(r.stdout, "Run "+id+" Succeeded") {
		t.Errorf("kiln rerun %v printed %q; want the new run's plan and its summary", args, r.stdout)
	}
	return describe(t, b.home, apiv1.RunID(id))
}

// wantNodes checks the top-level nodes' phases and which were reused.
func wantNodes(t *testing.T, run apiv1.Run, src apiv1.RunID, reused, skipped []string) {
	t.Helper()
	for _, n := range run.Status.Nodes {
		switch {
		case n.Parent != "":
		case slices.Contains(reused, n.Name):
			if n.Phase != apiv1.PhaseSucceeded || n.Reused == nil || n.Reused.Run != src || n.Reused.Node != n.Name ||
				len(n.Attempts) != 0 || n.Message != "reused from "+string(src) {
				t.Errorf("%s: node %s = %s reused %+v, %d attempts, %q; want Succeeded, reused from %s, no attempts",
					run.ID, n.Name, n.Phase, n.Reused, len(n.Attempts), n.Message, src)
			}
		case slices.Contains(skipped, n.Name):
			if n.Phase != apiv1.PhaseSkipped || !strings.Contains(n.Message, "not part of this rerun") {
				t.Errorf("%s: node %s = %s %q; want Skipped, not part of this rerun", run.ID, n.Name, n.Phase, n.Message)
			}
		case n.Phase != apiv1.PhaseSucceeded || n.Reused != nil || len(n.Attempts) == 0 && n.Children == nil:
			t.Errorf("%s: node %s = %s reused %+v, %d attempts; want it run here", run.ID, n.Name, n.Phase, n.Reused, len(n.Attempts))
		}
	}
}

func TestRerunFromOnlyUntilRunExactlyTheirTasksFromTheStoredSpec(t *testing.T) {
	t.Parallel()
	b := newRerunBench(t, newHome(t))
	if r := kiln(t, b.home, "run", b.file); r.code != 0 {
		t.Fatalf("run exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	src := runs(t, b.home)[0].ID
	if got, want := b.ran(t), []string{"eval", "notify", "prep", "side", "train"}; !slices.Equal(got, want) {
		t.Fatalf("the first run ran %v, want %v", got, want)
	}
	// The file changes on disk: reruns use the spec the run stored.
	b.write(t, "edited", "true")

	from := b.rerun(t, nil, string(src), "--from", "train", "-p", "greeting=hi")
	if got, want := b.ran(t), []string{"eval", "notify", "train"}; !slices.Equal(got, want) {
		t.Errorf("--from train ran %v, want %v", got, want)
	}
	if got, want := b.seenLine(t), "word=hello-prep greeting=hi data-of-"+string(src); got != want {
		t.Errorf("--from train: train read %q, want %q: prep's reused parameter and artifact, the new greeting", got, want)
	}
	wantNodes(t, from, src, []string{"prep", "side"}, nil)
	if from.RerunOf == nil || *from.RerunOf != (apiv1.RerunOf{Run: src, Mode: apiv1.RerunFrom, Node: "train"}) ||
		from.Params["greeting"] != "hi" || from.ID == src {
		t.Errorf("the rerun is %s, rerunOf %+v, params %v; want a new run of %s --from train with greeting=hi", from.ID, from.RerunOf, from.Params, src)
	}
	if p := nodeNamed(t, from, "prep").Reused; p != nil && p.Attempt != 1 {
		t.Errorf("prep reused from attempt %d, want 1", p.Attempt)
	}
	text := kiln(t, b.home, "describe", "run", string(from.ID)).stdout
	if !strings.Contains(text, "Rerun of:  "+string(src)+" (--from train)") || !strings.Contains(text, "reused: run "+string(src)+", task prep, attempt #1") {
		t.Errorf("describe of the rerun does not say what it reruns and where prep comes from:\n%s", text)
	}

	only := b.rerun(t, nil, string(src), "--only", "train")
	if got, want := b.ran(t), []string{"train"}; !slices.Equal(got, want) {
		t.Errorf("--only train ran %v, want %v", got, want)
	}
	if got, want := b.seenLine(t), "word=hello-prep greeting=hello data-of-"+string(src); got != want {
		t.Errorf("--only train: train read %q, want %q", got, want)
	}
	wantNodes(t, only, src, []string{"prep"}, []string{"eval", "side", "onExit"})

	until := b.rerun(t, nil, string(src), "--until", "train")
	if got, want := b.ran(t), []string{"notify", "prep", "train"}; !slices.Equal(got, want) {
		t.Errorf("--until train ran %v, want %v", got, want)
	}
	if got, want := b.seenLine(t), "word=hello-prep greeting=hello data-of-"+string(until.ID); got != want {
		t.Errorf("--until train: train read %q, want %q: prep ran again in the rerun", got, want)
	}
	wantNodes(t, until, src, nil, []string{"eval", "side"})

	// A rerun of a rerun reuses from the run that did the work.
	again := b.rerun(t, nil, string(from.ID), "--only", "eval")
	if got, want := b.ran(t), []string{"eval"}; !slices.Equal(got, want) {
		t.Errorf("--only eval of the rerun ran %v, want %v", got, want)
	}
	if p, tr := nodeNamed(t, again, "prep").Reused, nodeNamed(t, again, "train").Reused; p == nil || p.Run != src || tr == nil || tr.Run != from.ID {
		t.Errorf("prep reused from %+v, train from %+v; want %s (where prep ran) and %s (where train ran)", p, tr, src, from.ID)
	}
}

func TestRerunOfAFailedRunAndRefusals(t *testing.T) {
	t.Parallel()
	b := newRerunBench(t, newHome(t))
	writeFile(t, b.dir, "broken", "")
	if r := kiln(t, b.home, "run", b.file); r.code != 1 {
		t.Fatalf("run exited %d, want 1 (train is broken): %s%s", r.code, r.stdout, r.stderr)
	}
	src := runs(t, b.home)[0].ID
	if got, want := b.ran(t), []string{"notify", "prep", "side", "train"}; !slices.Equal(got, want) {
		t.Fatalf("the failed run ran %v, want %v", got, want)
	}
	for _, c := range []struct {
		args []string
		code int
		says []string
	}{
		{[]string{"--from", "nope"}, 1, []string{"KLN-4020", `"nope"`, "prep, train, eval, side"}},
		{[]string{"--only", "eval"}, 1, []string{"KLN-4021", "task train, which is Failed", "--until eval"}},
		{[]string{"--from", "onExit"}, 1, []string{"KLN-4020", "exit handler"}},
		{[]string{"--from", "train", "--only", "train"}, 2, []string{"KLN-4002", "exactly one of --from, --only and --until"}},
		{nil, 2, []string{"KLN-4002", "(got none)"}},
		{[]string{"--from", "train", "-p", "nope=1"}, 1, []string{"KLN-1014", `parameter "nope" is not declared`}},
	} {
		r := kiln(t, b.home, append([]string{"rerun", string(src)}, c.args...)...)
		for _, s := range c.says {
			if r.code != c.code || !strings.Contains(r.stderr, s) {
				t.Errorf("rerun %v = exit %d %q; want %d and %q", c.args, r.code, r.stderr, c.code, s)
			}
		}
	}
	if r := kiln(t, b.home, "rerun", "ledger-nope", "--from", "train"); r.code != 1 || !strings.Contains(r.stderr, "KLN-4001") {
		t.Errorf("rerun of an unknown run = exit %d %q; want KLN-4001", r.code, r.stderr)
	}
	if n := len(runs(t, b.home)); n != 1 {
		t.Errorf("refused reruns left %d runs, want only the first", n)
	}

	// A rerun that fails is retried as any run is: its failed tasks run
	// again, and its exit handler at the new end, and the tasks it left out
	// stay out.
	if r := kiln(t, b.home, "rerun", string(src), "--until", "train"); r.code != 1 {
		t.Fatalf("--until train exited %d, want 1 (train is still broken): %s%s", r.code, r.stdout, r.stderr)
	}
	until := runs(t, b.home)[0].ID
	if got, want := b.ran(t), []string{"notify", "prep", "train"}; !slices.Equal(got, want) {
		t.Errorf("the failing --until train ran %v, want %v", got, want)
	}
	if err := os.Remove(filepath.Join(b.dir, "broken")); err != nil {
		t.Fatal(err)
	}
	if r := kiln(t, b.home, "retry", string(until)); r.code != 0 {
		t.Fatalf("retry of the rerun exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if got, want := b.ran(t), []string{"notify", "train"}; !slices.Equal(got, want) {
		t.Errorf("retry of the --until rerun ran %v, want %v", got, want)
	}
	wantNodes(t, describe(t, b.home, until), src, nil, []string{"eval", "side"})

	from := b.rerun(t, nil, string(src), "--from", "train")
	if got, want := b.ran(t), []string{"eval", "notify", "train"}; !slices.Equal(got, want) {
		t.Errorf("--from train of the failed run ran %v, want %v", got, want)
	}
	wantNodes(t, from, src, []string{"prep", "side"}, nil)
	if first := describe(t, b.home, src); first.Status.Phase != apiv1.PhaseFailed {
		t.Errorf("the source run is %s after its rerun, want it left Failed", first.Status.Phase)
	}
}

func TestRerunThroughTheServer(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServeAs(t, home, nil, nil, "--isolation", "none") // tasks write the test's ledger
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	b := newRerunBench(t, home)
	if r := kilnWithEnv(t, client, home, "run", b.file); r.code != 0 {
		t.Fatalf("remote run exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	src := runs(t, home)[0].ID
	b.ran(t)
	until := b.rerun(t, client, string(src), "--until", "prep")
	if got, want := b.ran(t), []string{"notify", "prep"}; !slices.Equal(got, want) {
		t.Errorf("remote --until prep ran %v, want %v", got, want)
	}
	wantNodes(t, until, src, nil, []string{"train", "eval", "side"})
	if r := kilnWithEnv(t, client, home, "rerun", string(src), "--from", "sweep.3"); r.code != 1 || !strings.Contains(r.stderr, "KLN-4020") {
		t.Errorf("remote rerun of an unknown node = exit %d %q; want KLN-4020", r.code, r.stderr)
	}

	post := func(token, body string) (int, []byte) {
		req, _ := http.NewRequest("POST", base+"/api/v1/runs/"+string(src)+"/rerun", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if role := resp.Header.Get("Kiln-Role"); resp.StatusCode != http.StatusForbidden && role != "admin" {
			t.Errorf("the answer carries role %q, want the token's: admin", role)
		}
		return resp.StatusCode, got
	}
	viewer := strings.TrimSpace(kiln(t, home, "token", "create", "reader", "--role", "viewer", "--project", "default").stdout)
	if code, _ := post(viewer, `{"mode": "only", "node": "eval"}`); code != http.StatusForbidden {
		t.Errorf("a viewer's rerun = %d, want 403", code)
	}
	if code, got := post(admin, `{"mode": "sideways", "node": "eval"}`); code != http.StatusBadRequest || !strings.Contains(string(got), "sideways") {
		t.Errorf("a rerun in an unknown mode = %d %s, want 400 naming it", code, got)
	}
	code, got := post(admin, `{"mode": "only", "node": "eval", "params": {"greeting": "hey"}}`)
	var run apiv1.Run
	if err := json.Unmarshal(got, &run); code != http.StatusCreated || err != nil || run.RerunOf == nil || run.RerunOf.Node != "eval" || run.Params["greeting"] != "hey" {
		t.Fatalf("POST rerun = %d %s; want 201 and the new run, --only eval with greeting=hey", code, got)
	}
	waitFor(t, "the API's rerun to end", func() bool { return describe(t, home, run.ID).Status.Phase.Done() })
	done := describe(t, home, run.ID)
	wantNodes(t, done, src, []string{"prep", "train"}, []string{"side", "onExit"})
	if got, want := b.ran(t), []string{"eval"}; !slices.Equal(got, want) || done.Status.Phase != apiv1.PhaseSucceeded {
		t.Errorf("the API's --only eval ran %v and is %s, want %v and Succeeded", got, done.Status.Phase, want)
	}
}

// TestWebUIRerunsFromATask clicks "Rerun from here" on a task of a
// finished run in headless Chromium: the page goes to the new run, which
// says what it reruns; a viewer's page offers no such button.
func TestWebUIRerunsFromATask(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	src := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: rerun-ui}
spec:
  tasks:
  - {name: first, command: ["true"]}
  - {name: second, dependsOn: [first], command: ["true"]}
`)
	waitFor(t, "the run to succeed", func() bool { return describe(t, home, src.ID).Status.Phase == apiv1.PhaseSucceeded })
	viewer := strings.TrimSpace(kiln(t, home, "token", "create", "reader", "--role", "viewer", "--project", "default").stdout)

	var viewerButtons int
	err := chromedp.Run(ctx,
		chromedp.Navigate(base+"/?token="+viewer+"#/runs/"+string(src.ID)),
		chromedp.Poll(node("second", "Succeeded"), nil, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.Click(`g.node[data-name="second"] rect`),
		chromedp.WaitVisible(`#panel`),
		chromedp.Evaluate(`document.querySelectorAll("button.rerun").length`, &viewerButtons),
	)
	if err != nil {
		t.Fatalf("driving the UI as a viewer: %v", err)
	}
	if viewerButtons != 0 {
		t.Errorf("a viewer's page shows %d rerun buttons, want none", viewerButtons)
	}

	var rerunOf, hash string
	err = chromedp.Run(ctx,
		chromedp.Navigate(base+"/?token="+admin+"#/runs/"+string(src.ID)),
		chromedp.Poll(node("second", "Succeeded"), nil, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.Click(`g.node[data-name="second"] rect`),
		chromedp.WaitVisible(`button.rerun`),
		chromedp.Click(`button.rerun`),
		chromedp.WaitVisible(`p.rerun-of`),
		chromedp.Text(`p.rerun-of`, &rerunOf),
		chromedp.Evaluate(`decodeURIComponent(location.hash)`, &hash),
	)
	if err != nil {
		t.Fatalf("driving the UI: %v", err)
	}
	id := apiv1.RunID(strings.TrimPrefix(hash, "#/runs/"))
	if id == src.ID || !strings.Contains(rerunOf, "Rerun of "+string(src.ID)+" (--from second)") {
		t.Fatalf("after the click the page shows %s, %q; want a new run, a rerun of %s --from second", hash, rerunOf, src.ID)
	}
	waitFor(t, "the rerun to end", func() bool { return describe(t, home, id).Status.Phase.Done() })
	wantNodes(t, describe(t, home, id), src.ID, []string{"first"}, nil)
}

// TestRerunReusesAMapAndRefusesItsItems reruns the task after a map: the
// map is reused whole, its items' outputs reach the task that runs, and
// naming an item instead of the map is refused with the map named.
func TestRerunReusesAMapAndRefusesItsItems(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger, gathered := filepath.Join(dir, "ledger"), filepath.Join(dir, "gathered")
	wf := writeFile(t, dir, "map.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: fan}
spec:
  tasks:
  - name: each
    forEach: {items: [a, b]}
    command: [sh, -c, 'set -e; echo each-{{item}} >> `+ledger+`; echo "{{item}}-$KILN_RUN_ID" > $KILN_OUTPUTS/up']
    outputs: {parameters: [{name: up}]}
  - name: gather
    dependsOn: [each]
    env: [{name: UP, value: "{{tasks.each.outputs.parameters.up}}"}]
    command: [sh, -c, 'set -e; echo gather >> `+ledger+`; printf "%s\n" "$UP" > `+gathered+`']
`)
	if r := kiln(t, home, "run", wf); r.code != 0 {
		t.Fatalf("run exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	src := runs(t, home)[0].ID
	if err := os.Remove(ledger); err != nil {
		t.Fatal(err)
	}
	r := kiln(t, home, "rerun", string(src), "--from", "each.1")
	if r.code != 1 || !strings.Contains(r.stderr, "KLN-4020") || !strings.Contains(r.stderr, "name its parent: each") {
		t.Errorf("rerun --from each.1 = exit %d %q; want KLN-4020 naming each", r.code, r.stderr)
	}
	if r := kiln(t, home, "rerun", string(src), "--only", "gather"); r.code != 0 {
		t.Fatalf("rerun --only gather exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if got, want := sortedLines(t, ledger), []string{"gather"}; !slices.Equal(got, want) {
		t.Errorf("--only gather ran %v, want %v", got, want)
	}
	got, _ := os.ReadFile(gathered)
	if want := `["a-` + string(src) + `","b-` + string(src) + `"]`; strings.TrimSpace(string(got)) != want {
		t.Errorf("gather read %s, want the reused items' outputs %s", got, want)
	}
	run := describe(t, home, runs(t, home)[0].ID)
	wantNodes(t, run, src, []string{"each"}, nil)
	if n := len(run.Status.Nodes); n != 2 {
		t.Errorf("the rerun has %d nodes, want 2: the reused map's items stay in %s", n, src)
	}
}

// TestARerunOfADeletedRunsResultIsRefused deletes the run a rerun took
// its results from: a rerun that would reuse them is refused with a code
// naming the task, and a rerun from that task runs it again.
func TestARerunOfADeletedRunsResultIsRefused(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	b := newRerunBench(t, home)
	first := runOK(t, home, b.file)
	second := b.rerun(t, nil, string(first.ID), "--only", "eval")
	if r := kiln(t, home, "delete", "run", string(first.ID)); r.code != 0 {
		t.Fatalf("delete run: %d %s", r.code, r.stderr)
	}
	r := kiln(t, home, "rerun", string(second.ID), "--only", "eval")
	if r.code == 0 || !strings.Contains(r.stderr, "KLN-4027") || !strings.Contains(r.stderr, string(first.ID)+", which was deleted") {
		t.Fatalf("a rerun reusing a deleted run's results: exit %d, %q; want KLN-4027 naming the run", r.code, r.stderr)
	}
	if n := len(runs(t, home)); n != 1 {
		t.Errorf("%d runs after the refused rerun, want only the kept one: nothing half-made", n)
	}
	b.ran(t)
	third := b.rerun(t, nil, string(second.ID), "--from", "prep")
	if got := b.ran(t); !slices.Contains(got, "prep") || !slices.Contains(got, "train") {
		t.Errorf("rerun --from prep after the delete ran %v, want prep and train again", got)
	}
	if third.Status.Phase != apiv1.PhaseSucceeded {
		t.Errorf("rerun --from prep is %s", third.Status.Phase)
	}
}
