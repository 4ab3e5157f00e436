// Package federated is the node handler of federated tasks on the
// initiator: an attempt runs no process here; its shares run at the
// parties, driven by the federation coordinator the backend carries
// (internal/federation). The handler says what the attempt's shares are,
// judges the attempt from how they went, and shows them on the node.
package federated

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/workflow"
)

// ReportFile is where the coordinator reports an attempt's shares
// (federation.ReportFile; the engine reads it through the backend).
const ReportFile = "shares.json"

// Handler runs federated nodes.
type Handler struct{}

var (
	_ node.Handler    = Handler{}
	_ node.Reporter   = Handler{}
	_ node.Progressor = Handler{}
	_ node.Suspender  = Handler{}
	_ node.Announcer  = Handler{}
)

// New returns the federated handler.
func New() Handler { return Handler{} }

// Kind implements node.Handler.
func (Handler) Kind() apiv1.NodeKind { return apiv1.NodeKindFederated }

// Build implements node.Handler: the attempt's shares, no process.
func (Handler) Build(_ context.Context, a *node.Attempt, spec *job.Spec) error {
	f := a.Task.Federated
	if f == nil {
		return fmt.Errorf("task %s is not federated", a.Task.Spec.Name)
	}
	spec.ID = a.ID
	spec.Federated = &job.Federated{Task: a.Task.Spec.Name, AdmissionTimeout: f.AdmissionTimeout, PartyTimeout: f.PartyTimeout}
	for _, s := range f.Shares {
		spec.Federated.Shares = append(spec.Federated.Shares, job.Share{Party: s.Party, Role: s.Role, Name: s.Name})
	}
	return nil
}

// Judge implements node.Handler: the attempt succeeded when every share
// did; otherwise it failed as the coordinator says (which party, why).
func (Handler) Judge(_ *workflow.Task, st *job.Status) node.Verdict {
	if st.Succeeded() {
		return node.Verdict{Phase: apiv1.PhaseSucceeded}
	}
	code := apiv1.Code(st.Code)
	if code == "" {
		code = apiv1.CodeShareFailed
	}
	return node.Verdict{Phase: apiv1.PhaseFailed, Code: code, Message: st.Message, System: st.System, Permanent: st.Permanent}
}

// Report implements node.Reporter: an ended attempt's shares as the
// coordinator last saw them.
func (Handler) Report(ns *apiv1.NodeStatus, c node.Change) {
	if c.Ended != nil && len(c.Ended.Report) > 0 {
		setShares(ns, c.Ended.Report)
	}
}

// Suspends implements node.Suspender: a suspended federated run stops its
// shares at every party and starts them again, reserved anew, on resume.
func (Handler) Suspends(*workflow.Task) bool { return true }

// ProgressFile implements node.Progressor.
func (Handler) ProgressFile(*workflow.Task) string { return ReportFile }

// Progress implements node.Progressor: the shares of the running attempt.
func (Handler) Progress(ns *apiv1.NodeStatus, data []byte, _ time.Time) bool {
	return setShares(ns, data)
}

// setShares sets ns's shares from their JSON and reports whether they
// changed; JSON that does not parse changes nothing.
func setShares(ns *apiv1.NodeStatus, data []byte) bool {
	var shares []apiv1.PartyShare
	if json.Unmarshal(data, &shares) != nil || len(shares) == 0 {
		return false
	}
	old, _ := json.Marshal(ns.Parties)
	now, _ := json.Marshal(shares)
	if bytes.Equal(old, now) {
		return false
	}
	ns.Parties = shares
	return true
}

// Announce implements node.Announcer: each share whose state changed,
// as "party bob (host): Running at 10.0.0.2:4123".
func (Handler) Announce(before, after *apiv1.NodeStatus) []string {
	was := map[string]string{}
	for _, s := range before.Parties {
		was[s.Party+"/"+s.Role] = s.State
	}
	var out []string
	for _, s := range after.Parties {
		if was[s.Party+"/"+s.Role] == s.State {
			continue
		}
		msg := fmt.Sprintf("party %s (%s): %s", s.Party, s.Role, s.State)
		if s.State == apiv1.ShareRunning && s.Address != "" {
			msg += " at " + s.Address
		}
		if s.Message != "" {
			msg += ": " + s.Message
		}
		out = append(out, msg)
	}
	return out
}
