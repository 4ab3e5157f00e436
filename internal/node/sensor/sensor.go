// Package sensor is the node handler of sensor tasks: a task that waits,
// holding no resources, until something outside the run is there (a
// file), looking again every poll (Airflow's sensors, Argo's data
// dependencies). What it waits for and when it looks next are kept in its
// node's status, so a restarted engine waits on as before.
package sensor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/workflow"
)

// KindFile is a file sensor's GateStatus.Kind.
const KindFile = "file"

// Handler runs sensor nodes.
type Handler struct{ node.NoAttempt }

var (
	_ node.Handler = Handler{}
	_ node.Waiter  = Handler{}
)

// New returns the sensor handler.
func New() Handler { return Handler{} }

// Kind implements node.Handler.
func (Handler) Kind() apiv1.NodeKind { return apiv1.NodeKindSensor }

// Wait implements node.Waiter: the path, templates expanded, to look at
// at once; WakeAt is the timeout, if any.
func (Handler) Wait(_ context.Context, t *workflow.Task, in node.Inputs, now time.Time) (*apiv1.GateStatus, error) {
	path, err := in.Expand(t.Sensor.Path)
	if err != nil {
		return nil, &apiv1.Error{Code: apiv1.CodeTemplate, Field: "sensor.file.path", Message: err.Error()}
	}
	if !filepath.IsAbs(path) {
		return nil, &apiv1.Error{Code: apiv1.CodeInvalidValue, Field: "sensor.file.path", Message: fmt.Sprintf("%q is not an absolute path", path)}
	}
	st := &apiv1.GateStatus{Kind: KindFile, Message: filepath.Clean(path), WaitingSince: &now, NextLook: &now}
	if t.Sensor.Timeout > 0 {
		timeout := now.Add(t.Sensor.Timeout)
		st.WakeAt = &timeout
	}
	return st, nil
}

// Decide implements node.Waiter: found when the path exists (its output
// parameter "path" is it); past the timeout, it fails or is skipped as
// onTimeout says; else it looks again after a poll, or at the timeout if
// that comes first.
func (Handler) Decide(t *workflow.Task, st *apiv1.GateStatus, _ *apiv1.GateInput, now time.Time) (node.Verdict, bool, bool) {
	s := t.Sensor
	if _, err := os.Stat(st.Message); err == nil {
		st.Decision, st.At, st.NextLook = "found", &now, nil
		return node.Verdict{Phase: apiv1.PhaseSucceeded, Outputs: map[string]string{"path": st.Message}}, false, true
	} else if !errors.Is(err, fs.ErrNotExist) {
		st.Reason = err.Error() // cannot look (a directory it may not read): it looks again
	}
	var timeout time.Time
	if s.Timeout > 0 && st.WaitingSince != nil {
		timeout = st.WaitingSince.Add(s.Timeout)
	}
	if !timeout.IsZero() && !now.Before(timeout) {
		st.Decision, st.At, st.NextLook = "timedOut", &timeout, nil
		msg := fmt.Sprintf("%s did not appear within the sensor's timeout of %s", st.Message, s.Timeout)
		if s.OnTimeout == apiv1.GateTimeoutSkip {
			return node.Verdict{Message: msg + "; skipped (onTimeout: skip)"}, true, true
		}
		return node.Verdict{Phase: apiv1.PhaseFailed, Code: apiv1.CodeGateTimeout, Message: msg, Permanent: true}, false, true
	}
	next := now.Add(s.Poll)
	if !timeout.IsZero() && timeout.Before(next) {
		next = timeout
	}
	st.NextLook = &next
	return node.Verdict{}, false, false
}

// Accepts implements node.Waiter: a sensor takes nothing from people.
func (Handler) Accepts(*apiv1.GateStatus, apiv1.GateInput) error {
	return &apiv1.Error{Code: apiv1.CodeNotWaiting, Message: "a sensor waits for a file, not for an approval or a signal"}
}

// TakesInput implements node.Waiter: never.
func (Handler) TakesInput(*apiv1.GateStatus) bool { return false }

// Describe implements node.Waiter.
func (Handler) Describe(st *apiv1.GateStatus) string {
	switch st.Decision {
	case "found":
		return "found " + st.Message
	case "timedOut":
		return "timed out waiting for " + st.Message
	}
	s := "waiting for " + st.Message + " to exist"
	if st.Reason != "" {
		s += " (last look: " + st.Reason + ")"
	}
	return s
}
