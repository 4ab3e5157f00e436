package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store/pgtest"
)

// answer is a server's answer to a submission: its status, the run it
// names or the first coded error, and whether it replayed a key's run.
type answer struct {
	status   int
	run      apiv1.Run
	err      apiv1.Error
	replayed bool
	retry    string
}

// submitKeyed posts body to project ("" the default) with key as its
// Idempotency-Key ("" none).
func submitKeyed(t *testing.T, base, token, project, key, body string) answer {
	t.Helper()
	url := base + "/api/v1/runs"
	if project != "" {
		url += "?project=" + project
	}
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("submit: %v", err)
		return answer{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, replayed: resp.Header.Get("Idempotency-Replayed") == "true", retry: resp.Header.Get("Retry-After")}
	if resp.StatusCode == http.StatusCreated {
		_ = json.Unmarshal(b, &a.run)
		return a
	}
	var list apiv1.ErrorList
	if json.Unmarshal(b, &list) == nil && len(list.Errors) > 0 {
		a.err = *list.Errors[0]
	}
	return a
}

// servedRuns lists every run a server holds.
func servedRuns(t *testing.T, base, token string) []*apiv1.Run {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/v1/runs?limit=100", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list apiv1.RunList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("listing runs: %d %v", resp.StatusCode, err)
	}
	return list.Items
}

// serveOn starts kiln serve with args on store ("sqlite" or "postgres":
// a fresh database of a server of its own).
func serveOn(t *testing.T, storeKind string, args ...string) (base, token string) {
	t.Helper()
	home := newHome(t)
	var env []string
	if storeKind == "postgres" {
		env = []string{"KILN_STORE=" + pgtest.Start(t).NewDatabase(t), "KILN_SECRET_KEY_FILE=" + filepath.Join(t.TempDir(), "secret.key")}
	}
	base, token, _ = startServeAs(t, home, nil, env, args...)
	return base, token
}

func eachStore(t *testing.T, test func(t *testing.T, storeKind string)) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) { t.Parallel(); test(t, kind) })
	}
}

const keyedWorkflow = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: keyed}
spec:
  tasks:
  - {name: t, command: [%s]}
`

// A submission sent again with its key, alone or many at once, creates
// one run and every answer names it; the key with another submission is
// refused; the key in another project is another key.
func TestSubmitIdempotencyKey(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, storeKind string) {
		base, token := serveOn(t, storeKind)
		body := fmt.Sprintf(keyedWorkflow, "'true'")
		first := submitKeyed(t, base, token, "", "key-1", body)
		again := submitKeyed(t, base, token, "", "key-1", body)
		if first.status != http.StatusCreated || first.replayed || again.status != http.StatusCreated || !again.replayed || again.run.ID != first.run.ID {
			t.Fatalf("first %+v, again %+v; want both 201 naming one run, the second replayed", first, again)
		}

		other := fmt.Sprintf(keyedWorkflow, "'false'")
		answers := make([]answer, 8)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Go(func() { answers[i] = submitKeyed(t, base, token, "", "key-2", other) })
		}
		wg.Wait()
		for i, a := range answers {
			if a.status != http.StatusCreated || a.run.ID != answers[0].run.ID {
				t.Errorf("concurrent submission %d: %d %s %+v; want 201 naming %s", i, a.status, a.run.ID, a.err, answers[0].run.ID)
			}
		}

		changed := submitKeyed(t, base, token, "", "key-1", other)
		if changed.status != http.StatusConflict || changed.err.Code != apiv1.CodeKeyReused {
			t.Errorf("the key with another submission: %d %+v; want 409 KLN-4061", changed.status, changed.err)
		}
		elsewhere := submitKeyed(t, base, token, "b", "key-1", body)
		if elsewhere.status != http.StatusCreated || elsewhere.replayed || elsewhere.run.ID == first.run.ID || elsewhere.run.Project != "b" {
			t.Errorf("the key in project b: %d %+v, run %s of %q; want a new run of b", elsewhere.status, elsewhere.err, elsewhere.run.ID, elsewhere.run.Project)
		}
		bad := submitKeyed(t, base, token, "", "not a key", body)
		if bad.status != http.StatusBadRequest || bad.err.Code != apiv1.CodeIdempotencyKey || !strings.Contains(bad.err.Field, "Idempotency-Key") {
			t.Errorf("a malformed key: %d %+v; want 400 KLN-4060 naming the header", bad.status, bad.err)
		}
		file := writeFile(t, t.TempDir(), "wf.yaml", fmt.Sprintf(keyedWorkflow, "'true', again"))
		env := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+token)
		dir := t.TempDir()
		cli1 := kilnIn(t, dir, env, "submit", "--idempotency-key", "cli-key", file)
		cli2 := kilnIn(t, dir, env, "submit", "--idempotency-key", "cli-key", file)
		if cli1.code != 0 || strings.TrimSpace(cli1.stdout) != strings.TrimSpace(cli2.stdout) {
			t.Errorf("kiln submit --idempotency-key twice: %q (%s), %q (%s); want one run's ID twice", cli1.stdout, cli1.stderr, cli2.stdout, cli2.stderr)
		}
		if strings.Contains(cli1.stderr, "nothing new") || !strings.Contains(cli2.stderr, "nothing new was submitted") {
			t.Errorf("kiln submit said of the first %q and of the second %q; want the second alone said to be an earlier one's run", cli1.stderr, cli2.stderr)
		}
		if runs := servedRuns(t, base, token); len(runs) != 4 {
			t.Errorf("%d runs stored, want 4 (one per key and project)", len(runs))
		}
	})
}

// A submission not checked well before the write timeout is answered
// KLN-4062 (503) in time, and creates no run.
func TestSubmitPastWriteDeadline(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, storeKind string) {
		base, token := serveOn(t, storeKind, "--write-timeout", "1s", "--max-body", "4Mi")
		var big strings.Builder
		big.WriteString("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: big}\nspec:\n  tasks:\n")
		for i := range 99_000 { // under the limit of tasks and of bytes; seconds to check
			fmt.Fprintf(&big, "  - {name: t%d, command: [a]}\n", i)
		}
		got := submitKeyed(t, base, token, "", "big-1", big.String())
		if got.status != http.StatusServiceUnavailable || got.err.Code != apiv1.CodeSubmitDeadline || got.retry == "" {
			t.Fatalf("a submission slower than the write timeout: %d %+v, Retry-After %q; want 503 KLN-4062 with Retry-After", got.status, got.err, got.retry)
		}
		if runs := servedRuns(t, base, token); len(runs) != 0 {
			t.Errorf("%d runs stored after KLN-4062, want none", len(runs))
		}
	})
}

// A file of more tasks than allowed is refused with KLN-1023 on
// spec.tasks (how fast, and in how little memory:
// BenchmarkLoadTooManyTasks in internal/workflow).
func TestSubmitTooManyTasks(t *testing.T) {
	t.Parallel()
	base, token := serveOn(t, "sqlite", "--max-body", "4Mi")
	var many strings.Builder
	many.WriteString("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: many}\nspec:\n  tasks:\n")
	for i := range 105_000 {
		fmt.Fprintf(&many, "  - {name: t%d, command: [a]}\n", i)
	}
	got := submitKeyed(t, base, token, "", "", many.String())
	if got.status != http.StatusBadRequest || got.err.Code != apiv1.CodeOutOfRange || got.err.Field != "spec.tasks" {
		t.Errorf("105,000 tasks: %d %+v; want 400 KLN-1023 on spec.tasks", got.status, got.err)
	}
	if runs := servedRuns(t, base, token); len(runs) != 0 {
		t.Errorf("%d runs stored, want none", len(runs))
	}
}

// TestEmbeddedRunKeepsItsKey: kiln run without a server honours
// --idempotency-key as the server does: the same submission again with
// the key runs nothing new and reports the first run; another submission
// with the key is KLN-4061.
func TestEmbeddedRunKeepsItsKey(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	wf := writeFile(t, t.TempDir(), "wf.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: keyed}\nspec:\n  params: [{name: count, default: \"1\"}]\n  tasks: [{name: a, command: [echo, '{{params.count}}']}]\n")
	first := kiln(t, home, "run", "--idempotency-key", "k-1", wf)
	again := kiln(t, home, "run", "--idempotency-key", "k-1", wf)
	id := newestRun(t, home)
	if first.code != 0 || again.code != 0 || !strings.Contains(again.stdout, string(id)) || !strings.Contains(again.stderr, "nothing new was submitted") {
		t.Fatalf("kiln run twice with one key: %d %s / %d %s%s; want both to report %s", first.code, first.stderr, again.code, again.stdout, again.stderr, id)
	}
	if n := len(runs(t, home)); n != 1 {
		t.Errorf("%d runs after one submission sent twice with its key, want 1", n)
	}
	other := kiln(t, home, "run", "--idempotency-key", "k-1", "-p", "count=2", wf)
	if other.code == 0 || !strings.Contains(other.stderr, "KLN-4061") || !strings.Contains(other.stderr, string(id)) {
		t.Errorf("another submission with the key: %d %s, want KLN-4061 naming %s", other.code, other.stderr, id)
	}
}

// TestRerunIdempotencyKey: a rerun sent again with its Idempotency-Key
// answers the run it created and creates no other; another rerun under
// the key is KLN-4061; the Go client sends a key and one rerun results.
func TestRerunIdempotencyKey(t *testing.T) {
	t.Parallel()
	base, admin, _ := startServeAs(t, newHome(t), nil, nil, "--isolation", "none")
	src := postRunAs(t, base, admin, "", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec:\n  tasks:\n  - {name: a, command: [echo, a]}\n  - {name: b, dependsOn: [a], command: [echo, b]}\n")
	waitServed(t, base, admin, src.ID, apiv1.PhaseSucceeded)
	rerun := func(key, body string) (int, string, string) {
		req, _ := http.NewRequest("POST", base+"/api/v1/runs/"+string(src.ID)+"/rerun", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+admin)
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Idempotency-Replayed"), string(b)
	}
	var first, again apiv1.Run
	code1, replayed1, body1 := rerun("r-1", `{"mode": "from", "node": "b"}`)
	code2, replayed2, body2 := rerun("r-1", `{"mode": "from", "node": "b"}`)
	_ = json.Unmarshal([]byte(body1), &first)
	_ = json.Unmarshal([]byte(body2), &again)
	if code1 != http.StatusCreated || code2 != http.StatusCreated || first.ID == "" || again.ID != first.ID || replayed1 != "" || replayed2 != "true" {
		t.Errorf("one rerun sent twice with its key: %d %q %s / %d %q %s; want one run, the second answer replayed", code1, replayed1, body1, code2, replayed2, body2)
	}
	if code, _, body := rerun("r-1", `{"mode": "only", "node": "b"}`); code != http.StatusConflict || !strings.Contains(body, "KLN-4061") {
		t.Errorf("another rerun under the key: %d %s, want 409 KLN-4061", code, body)
	}
	if runs := servedRuns(t, base, admin); len(runs) != 2 {
		t.Errorf("%d runs stored, want the source and one rerun", len(runs))
	}
}
