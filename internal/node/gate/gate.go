// Package gate is the node handler of gate tasks (Flyte's gate nodes,
// Argo's suspend): an approval, a sleep or a signal. A waiting gate holds
// no resources; what it waits for and what it got are kept in its
// node's status, so a restarted engine waits on as before.
package gate

import (
	"context"
	"fmt"
	"strconv"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/workflow"
)

// Handler runs gate nodes.
type Handler struct{ node.NoAttempt }

var (
	_ node.Handler = Handler{}
	_ node.Waiter  = Handler{}
)

// New returns the gate handler.
func New() Handler { return Handler{} }

// Kind implements node.Handler.
func (Handler) Kind() apiv1.NodeKind { return apiv1.NodeKindGate }

// Wait implements node.Waiter: what the gate waits for, from now.
func (Handler) Wait(_ context.Context, t *workflow.Task, in node.Inputs, now time.Time) (*apiv1.GateStatus, error) {
	g := t.Gate
	st := &apiv1.GateStatus{Kind: g.Kind, Message: message(g.Message, in), WaitingSince: &now}
	if g.Kind == workflow.GateSignal {
		st.Type = g.Type
	}
	var sleep time.Time
	switch {
	case g.Kind == workflow.GateSleep && g.Until != "":
		s, err := in.Expand(g.Until)
		if err != nil {
			return nil, &apiv1.Error{Code: apiv1.CodeTemplate, Field: "gate.sleep.until", Message: err.Error()}
		}
		if sleep, err = time.Parse(time.RFC3339, s); err != nil {
			return nil, &apiv1.Error{
				Code: apiv1.CodeInvalidValue, Field: "gate.sleep.until",
				Message: fmt.Sprintf("%s is not an RFC 3339 time such as 2026-11-23T18:00:00Z", strconv.Quote(s)),
			}
		}
	case g.Kind == workflow.GateSleep:
		sleep = now.Add(g.Sleep)
	}
	wake := sleep
	if !sleep.IsZero() {
		st.SleepUntil = &sleep
	}
	if g.Timeout > 0 && (wake.IsZero() || now.Add(g.Timeout).Before(wake)) {
		wake = now.Add(g.Timeout)
	}
	if !wake.IsZero() {
		st.WakeAt = &wake
	}
	return st, nil
}

// message is a gate's message with its {{...}} references resolved; one
// that cannot be resolved (it reads a task that did not succeed) is kept as
// written, followed by why.
func message(text string, in node.Inputs) string {
	v, err := in.Expand(text)
	if err != nil {
		return text + " (" + err.Error() + ")"
	}
	return v
}

// Accepts implements node.Waiter with CheckGateInput.
func (Handler) Accepts(st *apiv1.GateStatus, in apiv1.GateInput) error { return CheckGateInput(st, in) }

// Decide implements node.Waiter. An approval approves or rejects; a
// signal's value becomes the output parameter "value"; a sleep ends at
// its time; a timeout does what onTimeout says.
func (Handler) Decide(t *workflow.Task, st *apiv1.GateStatus, in *apiv1.GateInput, now time.Time) (node.Verdict, bool, bool) {
	if in != nil && CheckGateInput(st, *in) == nil {
		return record(st, in)
	}
	var timeout time.Time
	if t.Gate.Timeout > 0 && st.WaitingSince != nil {
		timeout = st.WaitingSince.Add(t.Gate.Timeout)
	}
	if end := st.SleepUntil; end != nil && !now.Before(*end) && (timeout.IsZero() || !timeout.Before(*end)) {
		at := *end
		st.Decision, st.At = "slept", &at
		return node.Verdict{Phase: apiv1.PhaseSucceeded}, false, true
	}
	if timeout.IsZero() || now.Before(timeout) {
		return node.Verdict{}, false, false
	}
	st.At = &timeout
	return timedOut(t.Gate, st)
}

// record records in as the gate's decision.
func record(st *apiv1.GateStatus, in *apiv1.GateInput) (node.Verdict, bool, bool) {
	at := in.At
	st.By, st.At, st.Reason = in.By, &at, in.Reason
	if in.Value != nil {
		st.Decision, st.Value = "signalled", *in.Value
		return node.Verdict{Phase: apiv1.PhaseSucceeded, Outputs: map[string]string{"value": *in.Value}}, false, true
	}
	if *in.Approve {
		st.Decision = "approved"
		return node.Verdict{Phase: apiv1.PhaseSucceeded, Outputs: map[string]string{"approved": "true"}}, false, true
	}
	st.Decision = "rejected"
	msg := "rejected by " + in.By
	if in.Reason != "" {
		msg += ": " + in.Reason
	}
	return node.Verdict{Phase: apiv1.PhaseFailed, Code: apiv1.CodeRejected, Message: msg, Permanent: true}, false, true
}

// timedOut applies the gate's onTimeout.
func timedOut(g *workflow.Gate, st *apiv1.GateStatus) (node.Verdict, bool, bool) {
	st.Decision = "timedOut"
	msg := fmt.Sprintf("nothing came within the gate's timeout of %s", g.Timeout)
	switch g.OnTimeout {
	case apiv1.GateTimeoutSkip:
		return node.Verdict{Message: msg + "; skipped (onTimeout: skip)"}, true, true
	case apiv1.GateTimeoutSucceed:
		out := map[string]string{"approved": "true"}
		if g.Kind == workflow.GateSignal {
			out = map[string]string{"value": *g.Default}
			st.Value = *g.Default
		}
		return node.Verdict{Phase: apiv1.PhaseSucceeded, Outputs: out, Message: msg}, false, true
	}
	return node.Verdict{Phase: apiv1.PhaseFailed, Code: apiv1.CodeGateTimeout, Message: msg, Permanent: true}, false, true
}

// TakesInput implements node.Waiter: approvals and signals do, sleeps
// do not.
func (Handler) TakesInput(st *apiv1.GateStatus) bool { return st.Kind != workflow.GateSleep }

// Describe implements node.Waiter: what the gate waits for, or how its
// wait ended.
func (Handler) Describe(st *apiv1.GateStatus) string {
	if st.Decision != "" {
		return decision(st)
	}
	var s string
	switch st.Kind {
	case workflow.GateApprove:
		s = "waiting for approval (kiln approve or kiln reject)"
	case workflow.GateSignal:
		s = fmt.Sprintf("waiting for a value of type %s (kiln signal)", st.Type)
	default:
		s = "sleeping"
	}
	if st.WakeAt != nil {
		s += " until " + st.WakeAt.UTC().Format(time.RFC3339)
	}
	if st.Message != "" {
		s += ": " + st.Message
	}
	return s
}

// decision says how a gate's wait ended.
func decision(st *apiv1.GateStatus) string {
	s := st.Decision
	switch {
	case st.Decision == "timedOut" && st.Value != "":
		s = fmt.Sprintf("timed out; took its default %q", st.Value)
	case st.Decision == "timedOut":
		s = "timed out"
	case st.Value != "":
		s += " " + fmt.Sprintf("%q", st.Value)
	}
	if st.By != "" {
		s += " by " + st.By
	}
	if st.Reason != "" {
		s += ": " + st.Reason
	}
	return s
}
