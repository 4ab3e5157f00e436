package workflow

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func checkText(t *testing.T, file, text string) ([]Checked, []problem) {
	t.Helper()
	docs, err := Read(file, strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	plans, err := CheckDocuments(docs, nil)
	var got []problem
	for _, e := range apiv1.Errors(err) {
		got = append(got, problem{e.Code, e.Field})
		if e.File != file || e.Object == "" {
			t.Errorf("%v names no file or object", e)
		}
	}
	return plans, got
}

func TestNegativeTTLAndHistoryLimitsAreOutOfRange(t *testing.T) {
	t.Parallel()
	_, got := checkText(t, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  ttlSecondsAfterFinished: -1
  historyLimit: {succeeded: -1, failed: -5}
  tasks: [{name: a, command: ["true"]}]
`)
	want := []problem{
		{apiv1.CodeOutOfRange, "spec.ttlSecondsAfterFinished"},
		{apiv1.CodeOutOfRange, "spec.historyLimit.succeeded"},
		{apiv1.CodeOutOfRange, "spec.historyLimit.failed"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	_, got = checkText(t, "tj.yaml", `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: plain}
  trainer: {command: ["true"]}
  runPolicy: {ttlSecondsAfterFinished: -3}
`)
	if diff := cmp.Diff([]problem{{apiv1.CodeOutOfRange, "spec.runPolicy.ttlSecondsAfterFinished"}}, got); diff != "" {
		t.Errorf("TrainJob problems (-want +got):\n%s", diff)
	}
}

func TestATrainJobsTTLIsItsRunsTTL(t *testing.T) {
	t.Parallel()
	plans, got := checkText(t, "tj.yaml", `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: plain}
  trainer: {command: ["true"]}
  runPolicy: {ttlSecondsAfterFinished: 0}
`)
	if len(got) != 0 || len(plans) != 1 {
		t.Fatalf("problems %v, want one plan", got)
	}
	if ttl := plans[0].Plan.Workflow.Spec.TTLSecondsAfterFinished; ttl == nil || *ttl != 0 {
		t.Errorf("the run's ttlSecondsAfterFinished = %v, want 0", ttl)
	}
}
