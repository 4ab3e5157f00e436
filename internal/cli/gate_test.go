package cli

import (
	"bytes"
	"cmp"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/sqlite"
)

var gateSince = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

// gatedHome is a kiln home holding run gated-1, running and owned by an
// engine elsewhere: task ship waits for an approval, count for an int,
// nap sleeps, agreed was approved, build is a command.
func gatedHome(t *testing.T) (string, *sqlite.Store) {
	t.Helper()
	home := t.TempDir()
	st, err := sqlite.Open(t.Context(), filepath.Join(home, "kiln.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	since, wake, at := gateSince, gateSince.Add(time.Hour), gateSince.Add(time.Minute)
	nodes := []apiv1.NodeStatus{
		{Name: "ship", Phase: apiv1.PhaseRunning, Kind: apiv1.NodeKindGate, Gate: &apiv1.GateStatus{Kind: "approve", Message: "ship to prod?", WaitingSince: &since, WakeAt: &wake}},
		{Name: "count", Phase: apiv1.PhaseRunning, Kind: apiv1.NodeKindGate, Gate: &apiv1.GateStatus{Kind: "signal", Type: "int", WaitingSince: &since}},
		{Name: "nap", Phase: apiv1.PhaseRunning, Kind: apiv1.NodeKindGate, Gate: &apiv1.GateStatus{Kind: "sleep", WaitingSince: &since, WakeAt: &wake}},
		{Name: "agreed", Phase: apiv1.PhaseSucceeded, Kind: apiv1.NodeKindGate, Gate: &apiv1.GateStatus{
			Kind: "signal", WaitingSince: &since, Decision: "signalled", Value: "v2", By: "ann", At: &at, Reason: "the new one",
		}},
		{Name: "build", Phase: apiv1.PhaseRunning, Kind: apiv1.NodeKindCommand},
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	err = st.CreateRun(t.Context(), store.CreateRunParams{
		Run:   apiv1.Run{ID: "gated-1", Name: "gated", Kind: apiv1.KindWorkflow, CreatedAt: since, Workflow: &apiv1.Workflow{}},
		Nodes: names, Owner: "elsewhere", LeaseUntil: time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	change := &store.Change{Run: "gated-1", Owner: "elsewhere", Status: &apiv1.RunStatus{Phase: apiv1.PhaseRunning, StartedAt: &since}, Nodes: nodes}
	if err := st.Apply(t.Context(), change); err != nil {
		t.Fatal(err)
	}
	return home, st
}

func kiln(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestGateCommandsSendAsTheLocalUser(t *testing.T) {
	t.Parallel()
	home, st := gatedHome(t)
	me := "local"
	if u, err := user.Current(); err == nil && u.Username != "" {
		me = u.Username
	} else {
		me = cmp.Or(os.Getenv("USER"), me)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reject", "gated-1", "ship", "--reason", "not on a Friday"}, "rejected gate ship of run gated-1\n"},
		{[]string{"signal", "--reason", "fewer", "gated-1", "count", "--", "-3"}, "signalled gate count of run gated-1\n"},
	} {
		code, out, errOut := kiln(t, append([]string{"--home", home}, c.args...)...)
		if code != 0 || out != c.want {
			t.Errorf("kiln %v = %d, %q, %q; want 0 and %q", c.args, code, out, errOut, c.want)
		}
	}
	// A second decision before the engine applied the first is refused.
	if code, _, errOut := kiln(t, "--home", home, "approve", "gated-1", "ship"); code == 0 || !strings.Contains(errOut, "already rejected by "+me) {
		t.Errorf("a second decision on ship: exit %d, %q; want KLN-4014 naming the first", code, errOut)
	}
	got, err := st.GateInputs(t.Context(), "gated-1")
	if err != nil || len(got) != 2 {
		t.Fatalf("GateInputs = %+v, %v; want the two accepted", got, err)
	}
	if r := got[0]; r.Node != "ship" || r.Approve == nil || *r.Approve || r.Reason != "not on a Friday" || r.By != me || r.At.IsZero() {
		t.Errorf("the rejection was stored as %+v, want it from %s", r, me)
	}
	if r := got[1]; r.Node != "count" || r.Value == nil || *r.Value != "-3" || r.Reason != "fewer" || r.By != me {
		t.Errorf("the signal was stored as %+v", r)
	}
}

func TestGateCommandsPrintCodedRefusals(t *testing.T) {
	t.Parallel()
	home, st := gatedHome(t)

	cases := map[string]struct {
		args     []string
		wantCode int
		wantSays string
	}{
		"a value that is not an int": {[]string{"signal", "gated-1", "count", "ten"}, 1, `error: KLN-4014 Run/gated-1: task count: the value "ten" is not an int`},
		"an approval to a signal":    {[]string{"approve", "gated-1", "count"}, 1, "error: KLN-4014 Run/gated-1: task count: the gate waits for a value of type int"},
		"a value to an approval":     {[]string{"signal", "gated-1", "ship", "yes"}, 1, "KLN-4014"},
		"a gate decided already":     {[]string{"reject", "gated-1", "agreed"}, 1, `it was signalled "v2" by ann`},
		"a command task":             {[]string{"approve", "gated-1", "build"}, 1, "task build is a command task in phase Running, not a gate; its gate tasks are ship, count, nap, agreed"},
		"an unknown run":             {[]string{"approve", "gated-2", "ship"}, 1, "error: KLN-4001 Run/gated-2: no such run"},
		"a missing task":             {[]string{"reject", "gated-1"}, 2, "error: KLN-4002: kiln reject takes a run and one of its gate tasks"},
		"a signal without a value":   {[]string{"signal", "gated-1", "count"}, 2, "kiln signal RUN TASK VALUE (got 2 arguments)"},
	}
	t.Run("each refusal", func(t *testing.T) { // returns once every case has
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				code, out, errOut := kiln(t, append([]string{"--home", home}, tc.args...)...)
				if code != tc.wantCode || out != "" || !strings.Contains(errOut, tc.wantSays) {
					t.Errorf("kiln %v = %d, %q, %q; want %d and an error saying %q", tc.args, code, out, errOut, tc.wantCode, tc.wantSays)
				}
			})
		}
	})
	if got, err := st.GateInputs(t.Context(), "gated-1"); err != nil || len(got) != 0 {
		t.Errorf("GateInputs after refusals = %+v, %v; want none", got, err)
	}
}

func TestDescribeShowsWhatGatesWaitFor(t *testing.T) {
	t.Parallel()
	home, _ := gatedHome(t)
	code, out, errOut := kiln(t, "--home", home, "describe", "run", "gated-1")
	if code != 0 {
		t.Fatalf("kiln describe run = %d, %s", code, errOut)
	}
	local := func(d time.Duration) string { return gateSince.Add(d).Local().Format("2006-01-02 15:04:05") }
	for _, want := range []string{
		`gate: approve, waiting since ` + local(0) + `, times out ` + local(time.Hour) + `: "ship to prod?"`,
		`gate: signal (int), waiting since ` + local(0) + "\n",
		`gate: sleep, waiting since ` + local(0) + `, wakes ` + local(time.Hour) + "\n",
		`gate: signalled "v2" by ann at ` + local(time.Minute) + ` ("the new one")` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kiln describe run lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "gate: "); n != 4 {
		t.Errorf("kiln describe run shows %d gate lines, want 4 (none for the command):\n%s", n, out)
	}
}
