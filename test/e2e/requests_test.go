package e2e

import (
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// eventsOf returns run id's events on home, through describe.
func eventsOf(t *testing.T, home string, env []string, id apiv1.RunID) []apiv1.Event {
	t.Helper()
	var r result
	if env == nil {
		r = kiln(t, home, "describe", "run", string(id), "-o", "json")
	} else {
		r = kilnWithEnv(t, env, home, "describe", "run", string(id), "-o", "json")
	}
	var got struct {
		Events []apiv1.Event `json:"events"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("describe -o json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	return got.Events
}

// messageOf returns the message of run id's first event of reason, or "".
func messageOf(events []apiv1.Event, reason string) string {
	for _, e := range events {
		if e.Reason == reason {
			return e.Message
		}
	}
	return ""
}

// TestEachRequestIsAnEventNamingWhoAsked: suspend, unsuspend, stop and
// retry of a run on the embedded engine are each an event naming the
// account that asked; a cancel through a server names the token's name,
// ID and role.
func TestEachRequestIsAnEventNamingWhoAsked(t *testing.T) {
	t.Parallel()
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	home, dir := newHome(t), t.TempDir()
	ledger, gate := filepath.Join(dir, "ledger"), filepath.Join(dir, "gate")
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: asked}
spec:
  tasks:
  - name: work
    command: [sh, -c, 'echo work >> `+ledger+`; until test -e `+gate+`; do sleep 0.05; done; exit 3']
`)
	cmd := startKiln(t, home, "run", "-q", wf)
	waitFor(t, "work to start", func() bool { return fileHasLine(ledger) })
	id := runs(t, home)[0].ID
	for _, verb := range []string{"suspend", "suspend", "unsuspend", "stop", "stop"} { // asked twice: recorded once
		if r := kiln(t, home, verb, string(id)); r.code != 0 {
			t.Fatalf("kiln %s: %d %s", verb, r.code, r.stderr)
		}
	}
	writeFile(t, dir, "gate", "")
	waitFor(t, "the run to end", func() bool { return describe(t, home, id).Status.Phase.Done() })
	_ = cmd.Wait() // the stopped run fails: its exit code says so
	if r := kiln(t, home, "retry", "-q", string(id)); r.code == 0 {
		t.Fatalf("kiln retry of a run whose task exits 3 exited 0")
	}
	events := eventsOf(t, home, nil, id)
	for reason, want := range map[string]string{
		"SuspendRequested":   "suspend requested by " + me.Username,
		"UnsuspendRequested": "unsuspend requested by " + me.Username,
		"StopRequested":      "stop requested by " + me.Username,
		"Retried":            "retried after Failed by " + me.Username + ":",
	} {
		if got := messageOf(events, reason); !strings.HasPrefix(got, want) {
			t.Errorf("%s event says %q, want it to begin %q", reason, got, want)
		}
		n := 0
		for _, ev := range events {
			if ev.Reason == reason {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d %s events, want 1: a request asked again changes nothing", n, reason)
		}
	}

	served := newHome(t)
	base, admin, _ := startServe(t, served)
	created := kiln(t, served, "token", "create", "ci", "--role", "editor", "--project", "default")
	token := strings.TrimSpace(created.stdout)
	if token == "" {
		t.Fatalf("kiln token create: %s", created.stderr)
	}
	run := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: served}
spec:
  tasks:
  - name: wait
    command: [sleep, "300"]
`)
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+token)
	if r := kilnWithEnv(t, client, t.TempDir(), "cancel", string(run.ID)); r.code != 0 {
		t.Fatalf("kiln cancel through the server: %d %s", r.code, r.stderr)
	}
	got := messageOf(eventsOf(t, t.TempDir(), client, run.ID), "CancelRequested")
	if !strings.HasPrefix(got, "cancel requested by ci (token ") || !strings.HasSuffix(got, ", editor)") {
		t.Errorf("CancelRequested through the server says %q, want the token's name, ID and role", got)
	}
}
