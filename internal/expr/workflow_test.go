package expr_test

import (
	"strings"
	"testing"

	"kiln.dev/kiln/internal/expr"
)

// TestWorkflowInOnExitConditions: an onExit task's condition reads the
// run's status and failures, as Argo's exit handlers do; any other task's
// condition may not.
func TestWorkflowInOnExitConditions(t *testing.T) {
	t.Parallel()
	env := testEnv()
	env.Workflow = true
	failed := expr.WorkflowData{Status: "Failed", Failures: []expr.FailureData{{Name: "prep", Phase: "Failed", Code: "KLN-3002"}}}
	ok := expr.WorkflowData{Status: "Succeeded"}
	cases := map[string]struct {
		src          string
		data         expr.WorkflowData
		want         bool
		wantWorkflow bool
	}{
		"celebrate on success":      {src: `workflow.status == "Succeeded"`, data: ok, want: true, wantWorkflow: true},
		"celebrate, not on failure": {src: `workflow.status == "Succeeded"`, data: failed, want: false, wantWorkflow: true},
		"cry on failure":            {src: `workflow.status != "Succeeded"`, data: failed, want: true, wantWorkflow: true},
		"a failure by name":         {src: `workflow.failures.exists(f, f.name == "prep" && f.code == "KLN-3002")`, data: failed, want: true, wantWorkflow: true},
		"no failures":               {src: `size(workflow.failures) == 0`, data: ok, want: true, wantWorkflow: true},
		"a main task's outcome":     {src: `tasks.prep.failed`, data: failed, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := expr.CompileCondition(tc.src, env)
			if err != nil {
				t.Fatal(err)
			}
			d := testData()
			d.Workflow = tc.data
			got, err := c.Eval(d)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || c.ReadsWorkflow() != tc.wantWorkflow {
				t.Errorf("%s = %v (reads workflow %v), want %v (%v)", tc.src, got, c.ReadsWorkflow(), tc.want, tc.wantWorkflow)
			}
		})
	}
}

func TestWorkflowOutsideOnExitIsRefused(t *testing.T) {
	t.Parallel()
	for _, src := range []string{`workflow.status == "Failed"`, `size(workflow.failures) > 0`} {
		_, err := expr.CompileCondition(src, testEnv())
		if err == nil || !strings.Contains(err.Error(), "onExit tasks only") {
			t.Errorf("%s outside onExit: %v, want an error saying onExit tasks only", src, err)
		}
	}
	env := testEnv()
	env.Workflow = true
	if _, err := expr.CompileCondition(`workflow.state == "Failed"`, env); err == nil {
		t.Errorf("workflow.state compiled; want an error: kiln.Workflow has no field state")
	}
}
