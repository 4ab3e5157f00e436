package federated

import (
	"slices"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
)

func TestJudgeTakesTheCoordinatorsWord(t *testing.T) {
	t.Parallel()
	h := New()
	if v := h.Judge(nil, &job.Status{State: job.StateExited}); v.Phase != apiv1.PhaseSucceeded {
		t.Errorf("every share succeeded: verdict %+v", v)
	}
	st := &job.Status{State: job.StateExited, ExitCode: -1, Code: string(apiv1.CodePartyLost), Message: "party bob could not be reached", Permanent: false}
	if v := h.Judge(nil, st); v.Phase != apiv1.PhaseFailed || v.Code != apiv1.CodePartyLost || v.Message != st.Message || v.Permanent {
		t.Errorf("party lost: verdict %+v", v)
	}
	if v := h.Judge(nil, &job.Status{State: job.StateExited, ExitCode: -1, Stopped: true}); v.Code != apiv1.CodeShareFailed {
		t.Errorf("an uncoded failure: verdict %+v; want %s", v, apiv1.CodeShareFailed)
	}
}

func TestProgressSetsTheSharesAndAnnouncesWhatChanged(t *testing.T) {
	t.Parallel()
	h := New()
	ns := &apiv1.NodeStatus{Parties: []apiv1.PartyShare{{Party: "bob", Role: "host", State: apiv1.ShareReserved}, {Party: "carol", Role: "arbiter", State: apiv1.ShareRunning}}}
	before := *ns
	data := []byte(`[{"party":"bob","role":"host","state":"Running","address":"10.0.0.2:4123"},{"party":"carol","role":"arbiter","state":"Running"}]`)
	if !h.Progress(ns, data, time.Time{}) {
		t.Fatal("a changed report changed nothing")
	}
	if got := h.Announce(&before, ns); !slices.Equal(got, []string{"party bob (host): Running at 10.0.0.2:4123"}) {
		t.Errorf("announced %q; want bob's start alone", got)
	}
	if h.Progress(ns, data, time.Time{}) || h.Progress(ns, []byte("not json"), time.Time{}) {
		t.Error("the same report, or a bad one, changed the node")
	}
	ended := &apiv1.NodeStatus{Parties: ns.Parties}
	h.Report(ended, node.Change{Ended: &job.Status{Report: []byte(`[{"party":"bob","role":"host","state":"Succeeded"}]`)}})
	if len(ended.Parties) != 1 || ended.Parties[0].State != apiv1.ShareSucceeded {
		t.Errorf("the end's report left shares %+v", ended.Parties)
	}
}
