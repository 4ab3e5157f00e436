// Package gate is the gate task: a node that runs nothing and waits for an
// approval, a time or a signal.
package gate

import (
	"fmt"
	"strconv"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/workflow"
)

// MaxValueBytes bounds a signal's value: it becomes an output parameter,
// which tasks read from their environment and command line.
const MaxValueBytes = 64 << 10

// CheckGateInput reports whether in is an input the gate whose status is
// st waits for: st waits (WaitingSince set, no Decision), an approval or
// a rejection goes to an approval gate and a value to a signal gate, and
// the value parses as the signal's type. It returns nil or a coded
// *apiv1.Error: KLN-4014 for an input the gate does not wait for,
// KLN-1023 for a value over MaxValueBytes, KLN-4006 for an input that is
// neither an approval nor a value, or both. It does not look at the
// node's phase, which the caller knows.
func CheckGateInput(st *apiv1.GateStatus, in apiv1.GateInput) error {
	switch {
	case in.Approve != nil && in.Value != nil:
		return apiv1.Errorf(apiv1.CodeBadRequest, "an input is an approval or a value, not both")
	case in.Approve == nil && in.Value == nil:
		return apiv1.Errorf(apiv1.CodeBadRequest, "an input needs an approval or a value")
	case st == nil:
		return notWaiting("the task is not a gate")
	case st.Decision != "":
		return notWaiting("the gate is not waiting: it was " + decided(st))
	case st.WaitingSince == nil:
		return notWaiting("the gate has not started waiting")
	}
	switch st.Kind {
	case "approve":
		if in.Value != nil {
			return notWaiting("the gate waits for an approval or a rejection (kiln approve, kiln reject), not a value")
		}
		return nil
	case "signal":
		if in.Approve != nil {
			return notWaiting(fmt.Sprintf("the gate waits for a value of type %s (kiln signal), not an approval or a rejection", typeName(st.Type)))
		}
		return checkValue(st.Type, *in.Value)
	case "sleep":
		until := ""
		if st.WakeAt != nil {
			until = " until " + st.WakeAt.UTC().Format(time.RFC3339)
		}
		return notWaiting("the gate sleeps" + until + "; it takes no approval or value")
	}
	return notWaiting(fmt.Sprintf("the gate's kind %q is not approve, sleep or signal", st.Kind))
}

// checkValue checks that v parses as a signal value of type typ.
func checkValue(typ, v string) error {
	if len(v) > MaxValueBytes {
		return apiv1.Errorf(apiv1.CodeOutOfRange, fmt.Sprintf("the value is %d bytes, over the %d a signal may carry", len(v), MaxValueBytes))
	}
	if err := workflow.CheckValue(typ, v); err != nil {
		return notWaiting(err.Error())
	}
	return nil
}

func typeName(typ string) string {
	if typ == "" {
		return "string"
	}
	return typ
}

// decided says how a gate's wait ended, who ended it and when:
// `approved by ann at 2026-01-02T03:04:05Z ("ship it")`.
func decided(st *apiv1.GateStatus) string {
	s := st.Decision
	if st.Value != "" {
		s += " " + workflow.QuoteStart(st.Value)
	}
	if st.By != "" {
		s += " by " + st.By
	}
	if st.At != nil {
		s += " at " + st.At.UTC().Format(time.RFC3339)
	}
	if st.Reason != "" {
		s += " (" + strconv.Quote(st.Reason) + ")"
	}
	return s
}

func notWaiting(msg string) error { return apiv1.Errorf(apiv1.CodeNotWaiting, msg) }
