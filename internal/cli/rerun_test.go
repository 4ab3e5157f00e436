package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestRerunRequestTakesExactlyOneMode(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		from, only, until string
		params            []string
		want              apiv1.RerunRequest
		wantErr           string
	}{
		"from with params": {
			from: "train", params: []string{"lr=0.1", "seed=7"},
			want: apiv1.RerunRequest{Mode: apiv1.RerunFrom, Node: "train", Params: map[string]string{"lr": "0.1", "seed": "7"}},
		},
		"only":       {only: "eval", want: apiv1.RerunRequest{Mode: apiv1.RerunOnly, Node: "eval"}},
		"until":      {until: "prep", want: apiv1.RerunRequest{Mode: apiv1.RerunUntil, Node: "prep"}},
		"none":       {wantErr: "(got none)"},
		"two":        {from: "a", until: "b", wantErr: "(got --from and --until)"},
		"bad params": {from: "a", params: []string{"lr"}, wantErr: `-p "lr" is not name=value`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := rerunRequest(tc.from, tc.only, tc.until, tc.params)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), string(apiv1.CodeUsage)) {
					t.Errorf("err = %v, want KLN-4002 saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRerunPlanSaysWhatRunsWhatIsReusedAndWhatIsNot(t *testing.T) {
	t.Parallel()
	reused := node("prep", apiv1.PhaseSucceeded, apiv1.NodeKindCommand, "")
	reused.Reused = &apiv1.Reused{Run: "wf-a", Node: "prep", Attempt: 1}
	run := &apiv1.Run{ID: "wf-b", RerunOf: &apiv1.RerunOf{Run: "wf-a", Mode: apiv1.RerunOnly, Node: "train"}, Status: apiv1.RunStatus{
		Nodes: []apiv1.NodeStatus{
			reused, node("train", apiv1.PhasePending, apiv1.NodeKindCommand, ""),
			node("eval", apiv1.PhaseSkipped, apiv1.NodeKindCommand, ""), node("onExit", apiv1.PhaseSkipped, apiv1.NodeKindExit, ""),
		},
	}}
	var b strings.Builder
	writeRerunPlan(&b, run)
	want := "wf-b reruns wf-a (--only train)\n  runs:    train\n  reused:  prep\n  not run: eval, onExit\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}
