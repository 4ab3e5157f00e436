package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// federatedRun is a federated run at its initiator alice: task prep, then
// secure-sum whose first attempt failed at carol and whose second runs.
func federatedRun() *apiv1.Run {
	seen := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	sum := node("secure-sum", apiv1.PhaseRunning, apiv1.NodeKindFederated, "")
	sum.Attempts = []apiv1.AttemptStatus{
		{Number: 1, Phase: apiv1.PhaseFailed, Code: "KLN-7011", Message: "carol did not admit its share within 60s: 4 cpu"},
		{Number: 2, Phase: apiv1.PhaseRunning},
	}
	sum.Parties = []apiv1.PartyShare{
		{Party: "alice", Role: "guest", Task: "secure-sum", Attempt: 2, State: apiv1.ShareRunning, Address: "10.0.0.1:41000"},
		{Party: "bob", Role: "host", Task: "secure-sum", Attempt: 2, State: apiv1.ShareReserved, Address: "10.0.0.2:41000"},
		{
			Party: "carol", Role: "arbiter", Task: "secure-sum", Attempt: 2, State: apiv1.ShareUnreachable,
			Code: "KLN-7012", Message: "connection refused", SeenAt: &seen,
		},
		{Party: "alice", Role: "host", Task: "secure-sum-host", State: apiv1.SharePending},
	}
	return &apiv1.Run{
		ID: "sum-1", Name: "secure-sum", Source: "sum.yaml",
		Federation: &apiv1.FederationInfo{
			Initiator: "alice", Party: "alice", Run: "sum-1",
			Roles: map[string][]string{"arbiter": {"carol"}, "host": {"bob", "alice"}, "guest": {"alice"}, "auditor": {"dave"}},
		},
		Status: apiv1.RunStatus{Phase: apiv1.PhaseRunning, Nodes: []apiv1.NodeStatus{node("prep", apiv1.PhaseSucceeded, apiv1.NodeKindFederated, ""), sum}},
	}
}

func TestDescribeShowsEachPartysShareOfAFederatedTask(t *testing.T) {
	t.Parallel()
	want := `  TASK                PHASE        ATTEMPT  EXIT  DURATION  CODE      MESSAGE
  prep                Succeeded                   -
  secure-sum          Running                     -
                      Failed       #1       -     -         KLN-7011  carol did not admit its share within 60s: 4 cpu
                      Running      #2       -     -
    alice as guest    Running      #2                                 at 10.0.0.1:41000
    bob as host       Reserved     #2                                 at 10.0.0.2:41000
    carol as arbiter  Unreachable  #2                       KLN-7012  last heard 2026-01-02 03:04:05: connection refused
    alice as host     Pending                                         task secure-sum-host
`
	if diff := cmp.Diff(want, tasksSection(t, describeText(federatedRun(), false))); diff != "" {
		t.Errorf("the Tasks table (-want +got):\n%s", diff)
	}
}

func TestDescribeHeaderSaysWhoInitiatedAFederatedRun(t *testing.T) {
	t.Parallel()
	got := describeText(federatedRun(), false)
	want := "Source:    sum.yaml\nFederated: initiated by alice; guest: alice; host: bob, alice; arbiter: carol; auditor: dave\nCreated:"
	if !strings.Contains(got, want) {
		t.Errorf("describe lacks %q:\n%s", want, got)
	}
	if strings.Contains(got, "Part of:") {
		t.Errorf("describe of the whole run calls it a part:\n%s", got)
	}
}

func TestDescribeSaysWhichRunAPartIsPartOf(t *testing.T) {
	t.Parallel()
	r := &apiv1.Run{
		ID: "sum-1.bob", Name: "secure-sum-bob", Source: "federation",
		Federation: &apiv1.FederationInfo{
			Initiator: "alice", Party: "bob", Run: "sum-1", Part: true,
			Roles:  map[string][]string{"guest": {"alice"}, "host": {"bob"}},
			Shares: []apiv1.ShareRef{{Task: "secure-sum", Party: "bob", Role: "host", Name: "secure-sum"}},
		},
		Status: apiv1.RunStatus{Phase: apiv1.PhaseRunning, Nodes: []apiv1.NodeStatus{
			node("secure-sum", apiv1.PhaseRunning, apiv1.NodeKindCommand, ""),
			node("local", apiv1.PhasePending, apiv1.NodeKindCommand, ""),
		}},
	}
	got := describeText(r, false)
	want := "Source:    federation\nPart of:   run sum-1 (initiated by alice) as party bob\nFederated: initiated by alice; guest: alice; host: bob\n"
	if !strings.Contains(got, want) {
		t.Errorf("describe of a part lacks %q:\n%s", want, got)
	}
	wantTasks := `  TASK        PHASE    ATTEMPT  EXIT  DURATION  CODE  MESSAGE
  secure-sum  Running                 -
                                                      share of: task secure-sum as host
  local       Pending                 -
`
	if diff := cmp.Diff(wantTasks, tasksSection(t, got)); diff != "" {
		t.Errorf("the Tasks table of a part (-want +got):\n%s", diff)
	}
}

func TestDescribeOfARunThatIsNotFederatedHasNoFederationLines(t *testing.T) {
	t.Parallel()
	r := &apiv1.Run{ID: "plain-1", Status: apiv1.RunStatus{Nodes: []apiv1.NodeStatus{node("a", apiv1.PhaseSucceeded, apiv1.NodeKindCommand, "")}}}
	got := describeText(r, false)
	for _, no := range []string{"Federated:", "Part of:", " as ", "share of"} {
		if strings.Contains(got, no) {
			t.Errorf("describe of a plain run shows %q:\n%s", no, got)
		}
	}
}

func TestGetRunsMarksFederatedRunsAndParts(t *testing.T) {
	t.Parallel()
	fed := federatedRun()
	part := &apiv1.Run{ID: "sum-1.alice", Name: "secure-sum-alice", Federation: &apiv1.FederationInfo{Initiator: "alice", Party: "alice", Run: "sum-1", Part: true}}
	other := &apiv1.Run{ID: "x-2.bob", Name: "x-bob", Federation: &apiv1.FederationInfo{Initiator: "carol", Party: "bob", Run: "x-2", Part: true}}
	plain := &apiv1.Run{ID: "plain-1", Name: "plain"}
	var b bytes.Buffer
	if err := writeRuns(&b, []*apiv1.Run{fed, part, other, plain}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	for i, want := range []string{
		"sum-1        secure-sum (federated)",
		"sum-1.alice  secure-sum-alice (part, from alice)",
		"x-2.bob      x-bob (part, from carol)",
		"plain-1      plain ",
	} {
		if !strings.HasPrefix(lines[i+1], want) {
			t.Errorf("row %d is %q, want it to start %q; table:\n%s", i+1, lines[i+1], want, b.String())
		}
	}
}
