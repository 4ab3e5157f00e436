package gate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/node/gate"
	"kiln.dev/kiln/internal/node/nodetest"
	"kiln.dev/kiln/internal/workflow"
)

var since = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// gateTask compiles a gate task whose gate is g, in a workflow with the
// param when.
func gateTask(t *testing.T, g string) *workflow.Task {
	t.Helper()
	return nodetest.Compile(t, "spec:\n  params: [{name: when}]\n  tasks:\n  - name: g\n    gate: "+g+"\n")
}

func at(d time.Duration) *time.Time {
	v := since.Add(d)
	return &v
}

func TestKind(t *testing.T) {
	t.Parallel()
	if got := gate.New().Kind(); got != apiv1.NodeKindGate {
		t.Errorf("Kind() = %q, want %q", got, apiv1.NodeKindGate)
	}
}

func TestWait(t *testing.T) {
	t.Parallel()

	cases := map[string]struct {
		gate string
		when string
		want *apiv1.GateStatus
	}{
		"an approval waits as long as it takes": {
			gate: `{approve: {message: "ship it?"}}`,
			want: &apiv1.GateStatus{Kind: "approve", Message: "ship it?", WaitingSince: at(0)},
		},
		"an approval with a timeout wakes then": {
			gate: `{approve: {}, timeout: 1h}`,
			want: &apiv1.GateStatus{Kind: "approve", WaitingSince: at(0), WakeAt: at(time.Hour)},
		},
		"a signal keeps its type": {
			gate: `{signal: {type: int, message: "how many?"}}`,
			want: &apiv1.GateStatus{Kind: "signal", Type: "int", Message: "how many?", WaitingSince: at(0)},
		},
		"a signal's type is string by default": {
			gate: `{signal: {}, timeout: 30s}`,
			want: &apiv1.GateStatus{Kind: "signal", Type: "string", WaitingSince: at(0), WakeAt: at(30 * time.Second)},
		},
		"a sleep for a duration": {
			gate: `{sleep: {duration: 10m}}`,
			want: &apiv1.GateStatus{Kind: "sleep", WaitingSince: at(0), WakeAt: at(10 * time.Minute), SleepUntil: at(10 * time.Minute)},
		},
		"a sleep cut short by its timeout": {
			gate: `{sleep: {duration: 10m}, timeout: 5m}`,
			want: &apiv1.GateStatus{Kind: "sleep", WaitingSince: at(0), WakeAt: at(5 * time.Minute), SleepUntil: at(10 * time.Minute)},
		},
		"a sleep that ends before its timeout": {
			gate: `{sleep: {duration: 10m}, timeout: 20m}`,
			want: &apiv1.GateStatus{Kind: "sleep", WaitingSince: at(0), WakeAt: at(10 * time.Minute), SleepUntil: at(10 * time.Minute)},
		},
		"a sleep until a time": {
			gate: `{sleep: {until: "2026-03-02T08:30:00Z"}}`,
			want: &apiv1.GateStatus{Kind: "sleep", WaitingSince: at(0), WakeAt: at(20*time.Hour + 30*time.Minute), SleepUntil: at(20*time.Hour + 30*time.Minute)},
		},
		"a sleep until a time read from a template": {
			gate: `{sleep: {until: "{{params.when}}"}}`,
			when: "2026-03-01T13:00:00+01:00",
			want: &apiv1.GateStatus{Kind: "sleep", WaitingSince: at(0), WakeAt: at(0), SleepUntil: at(0)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in := &nodetest.Inputs{Params: map[string]string{"when": tc.when}}
			got, err := gate.New().Wait(t.Context(), gateTask(t, tc.gate), in, since)
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmpTimes); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// cmpTimes compares times as instants, whatever their location.
var cmpTimes = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

func TestWaitRefusesAnUntilThatIsNoTime(t *testing.T) {
	t.Parallel()
	in := &nodetest.Inputs{Params: map[string]string{"when": "tomorrow at nine"}}
	st, err := gate.New().Wait(t.Context(), gateTask(t, `{sleep: {until: "{{params.when}}"}}`), in, since)
	errs := apiv1.Errors(err)
	if st != nil || len(errs) != 1 || errs[0].Code != apiv1.CodeInvalidValue || errs[0].Field != "gate.sleep.until" ||
		!strings.Contains(errs[0].Message, `"tomorrow at nine" is not an RFC 3339 time`) {
		t.Fatalf("Wait = %+v, %v; want no status and one %s at gate.sleep.until quoting the value", st, err, apiv1.CodeInvalidValue)
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()

	yes, no := true, false
	value := func(v string) *string { return &v }
	decidedAt := since.Add(3 * time.Minute)
	cases := map[string]struct {
		gate      string
		in        *apiv1.GateInput
		now       time.Duration // after since
		want      node.Verdict
		wantSkip  bool
		wantDone  bool
		wantState *apiv1.GateStatus // what Decide records; nil: as Wait left it
	}{
		"an approval approves": {
			gate:     `{approve: {message: "ok?"}}`,
			in:       &apiv1.GateInput{Approve: &yes, By: "ann", Reason: "looks good", At: decidedAt},
			want:     node.Verdict{Phase: apiv1.PhaseSucceeded, Outputs: map[string]string{"approved": "true"}},
			wantDone: true,
			wantState: &apiv1.GateStatus{
				Kind: "approve", Message: "ok?", WaitingSince: at(0),
				Decision: "approved", By: "ann", At: &decidedAt, Reason: "looks good",
			},
		},
		"a rejection fails, naming who": {
			gate: `{approve: {}, timeout: 1h}`,
			in:   &apiv1.GateInput{Approve: &no, By: "bob", Reason: "too risky", At: decidedAt},
			want: node.Verdict{
				Phase: apiv1.PhaseFailed, Code: apiv1.CodeRejected, Message: "rejected by bob: too risky", Permanent: true,
			},
			wantDone: true,
			wantState: &apiv1.GateStatus{
				Kind: "approve", WaitingSince: at(0), WakeAt: at(time.Hour),
				Decision: "rejected", By: "bob", At: &decidedAt, Reason: "too risky",
			},
		},
		"a rejection without a reason": {
			gate:     `{approve: {}}`,
			in:       &apiv1.GateInput{Approve: &no, By: "bob", At: decidedAt},
			want:     node.Verdict{Phase: apiv1.PhaseFailed, Code: apiv1.CodeRejected, Message: "rejected by bob", Permanent: true},
			wantDone: true,
		},
		"a signal's value is its output": {
			gate:     `{signal: {type: int}}`,
			in:       &apiv1.GateInput{Value: value("42"), By: "cy", At: decidedAt},
			want:     node.Verdict{Phase: apiv1.PhaseSucceeded, Outputs: map[string]string{"value": "42"}},
			wantDone: true,
			wantState: &apiv1.GateStatus{
				Kind: "signal", Type: "int", WaitingSince: at(0),
				Decision: "signalled", Value: "42", By: "cy", At: &decidedAt,
			},
		},
		"a value that is not of the signal's type is ignored": {
			gate: `{signal: {type: int}}`,
			in:   &apiv1.GateInput{Value: value("many"), By: "cy", At: decidedAt},
		},
		"a value sent to an approval gate is ignored": {
			gate: `{approve: {}, timeout: 1h}`,
			in:   &apiv1.GateInput{Value: value("true"), By: "cy", At: decidedAt},
			now:  time.Minute,
		},
		"an approval sent to a signal gate is ignored": {
			gate: `{signal: {}}`,
			in:   &apiv1.GateInput{Approve: &yes, By: "ann", At: decidedAt},
		},
		"an approval sent to a sleeping gate is ignored": {
			gate: `{sleep: {duration: 10m}}`,
			in:   &apiv1.GateInput{Approve: &yes, By: "ann", At: decidedAt},
			now:  time.Minute,
		},
		"a sleep goes on before its time": {
			gate: `{sleep: {duration: 10m}}`,
			now:  10*time.Minute - time.Nanosecond,
		},
		"a sleep ends at its time": {
			gate:      `{sleep: {duration: 10m}}`,
			now:       10 * time.Minute,
			want:      node.Verdict{Phase: apiv1.PhaseSucceeded},
			wantDone:  true,
			wantState: &apiv1.GateStatus{Kind: "sleep", WaitingSince: at(0), WakeAt: at(10 * time.Minute), SleepUntil: at(10 * time.Minute), Decision: "slept", At: at(10 * time.Minute)},
		},
		"a sleep whose timeout is its length sleeps, not times out": {
			gate:     `{sleep: {duration: 10m}, timeout: 10m, onTimeout: fail}`,
			now:      10 * time.Minute,
			want:     node.Verdict{Phase: apiv1.PhaseSucceeded},
			wantDone: true,
		},
		"a sleep with a longer timeout ends at its time": {
			gate:     `{sleep: {duration: 10m}, timeout: 1h}`,
			now:      time.Hour,
			want:     node.Verdict{Phase: apiv1.PhaseSucceeded},
			wantDone: true,
		},
		"a sleep until a time ends then": {
			gate:     `{sleep: {until: "2026-03-01T12:30:00Z"}, timeout: 1h}`,
			now:      31 * time.Minute,
			want:     node.Verdict{Phase: apiv1.PhaseSucceeded},
			wantDone: true,
		},
		"a sleep cut short by its timeout times out": {
			gate:     `{sleep: {duration: 10m}, timeout: 5m}`,
			now:      5 * time.Minute,
			want:     node.Verdict{Phase: apiv1.PhaseFailed, Code: apiv1.CodeGateTimeout, Permanent: true},
			wantDone: true,
		},
		"an approval waits before its timeout": {
			gate: `{approve: {}, timeout: 1h}`,
			now:  59 * time.Minute,
		},
		"an approval without a timeout waits for ever": {
			gate: `{approve: {}}`,
			now:  24 * 365 * time.Hour,
		},
		"a timeout fails by default": {
			gate:      `{approve: {}, timeout: 1h}`,
			now:       time.Hour,
			want:      node.Verdict{Phase: apiv1.PhaseFailed, Code: apiv1.CodeGateTimeout, Permanent: true},
			wantDone:  true,
			wantState: &apiv1.GateStatus{Kind: "approve", WaitingSince: at(0), WakeAt: at(time.Hour), Decision: "timedOut", At: at(time.Hour)},
		},
		"a timeout with onTimeout fail fails": {
			gate:     `{signal: {}, timeout: 1h, onTimeout: fail}`,
			now:      2 * time.Hour,
			want:     node.Verdict{Phase: apiv1.PhaseFailed, Code: apiv1.CodeGateTimeout, Permanent: true},
			wantDone: true,
		},
		"a timeout with onTimeout succeed approves": {
			gate:     `{approve: {}, timeout: 1h, onTimeout: succeed}`,
			now:      time.Hour,
			want:     node.Verdict{Phase: apiv1.PhaseSucceeded, Outputs: map[string]string{"approved": "true"}},
			wantDone: true,
		},
		"a timeout with onTimeout succeed gives a signal its default": {
			gate:      `{signal: {type: float, default: "0.5"}, timeout: 1h, onTimeout: succeed}`,
			now:       time.Hour,
			want:      node.Verdict{Phase: apiv1.PhaseSucceeded, Outputs: map[string]string{"value": "0.5"}},
			wantDone:  true,
			wantState: &apiv1.GateStatus{Kind: "signal", Type: "float", WaitingSince: at(0), WakeAt: at(time.Hour), Decision: "timedOut", Value: "0.5", At: at(time.Hour)},
		},
		"a timeout with onTimeout skip skips": {
			gate:     `{approve: {}, timeout: 1h, onTimeout: skip}`,
			now:      time.Hour,
			wantSkip: true,
			wantDone: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			task := gateTask(t, tc.gate)
			st, err := gate.New().Wait(t.Context(), task, &nodetest.Inputs{}, since)
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			waiting := *st
			got, skip, done := gate.New().Decide(task, st, tc.in, since.Add(tc.now))
			if skip != tc.wantSkip || done != tc.wantDone {
				t.Fatalf("skip, done = %v, %v; want %v, %v (verdict %+v)", skip, done, tc.wantSkip, tc.wantDone, got)
			}
			if tc.want.Code == apiv1.CodeGateTimeout || tc.wantSkip {
				if !strings.Contains(got.Message, "within the gate's timeout of 1h0m0s") && !strings.Contains(got.Message, "of 5m0s") {
					t.Errorf("message %q does not say the timeout", got.Message)
				}
				got.Message = ""
			}
			if tc.want.Phase == apiv1.PhaseSucceeded && tc.in == nil {
				got.Message = "" // a timeout that succeeds says so; not compared
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			want := tc.wantState
			if want == nil && !done {
				want = &waiting
			}
			if want != nil {
				if diff := cmp.Diff(want, st, cmpTimes); diff != "" {
					t.Errorf("status (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// A gate decided once takes no second input: it stays as it was.
func TestDecideTakesOneDecision(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	task := gateTask(t, `{approve: {}}`)
	st, err := gate.New().Wait(t.Context(), task, &nodetest.Inputs{}, since)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, done := gate.New().Decide(task, st, &apiv1.GateInput{Approve: &yes, By: "ann", At: since}, since); !done {
		t.Fatal("the first approval did not decide the gate")
	}
	first := *st
	v, _, done := gate.New().Decide(task, st, &apiv1.GateInput{Approve: &no, By: "bob", At: since.Add(time.Minute)}, since.Add(time.Minute))
	if done || v.Phase != "" {
		t.Errorf("a second input decided the gate again: %+v", v)
	}
	if diff := cmp.Diff(&first, st, cmpTimes); diff != "" {
		t.Errorf("a second input changed the status (-first +now):\n%s", diff)
	}
}

// A gate's message is shown as its references resolved: the record says
// what the person deciding is asked, not the template.
func TestWaitResolvesTheMessage(t *testing.T) {
	t.Parallel()
	in := &nodetest.Inputs{Params: map[string]string{"model": "resnet-50"}}
	st, err := gate.New().Wait(t.Context(), gateTask(t, `{approve: {message: "ship {{params.model}}?"}}`), in, since)
	if err != nil || st.Message != "ship resnet-50?" {
		t.Fatalf("Wait = %+v, %v; want the message %q", st, err, "ship resnet-50?")
	}
}
