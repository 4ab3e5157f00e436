package workflow

import (
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
)

// A task too big for the machine is named by the field that sets its
// size, in the terms of the document it came from.
func TestCheckFitsNamesTheFieldThatSetsTheSize(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		text, object, field, says string
	}{
		"a task": {
			text:   "kind: Workflow\nmetadata: {name: wf}\nspec:\n  tasks:\n  - {name: big, command: [\"true\"], resources: {cpu: 8}}\n",
			object: "Workflow/wf", field: "spec.tasks[0].resources", says: "task big asks for cpu 8",
		},
		"a training job of too many nodes": {
			text:   "kind: Workflow\nmetadata: {name: wf}\nspec:\n  tasks:\n  - {name: small, command: [\"true\"]}\n  - {name: fit, train: {runtime: torch-distributed, command: [\"true\"], numNodes: 8}}\n",
			object: "Workflow/wf", field: "spec.tasks[1].train.numNodes", says: "(8 nodes of cpu 1",
		},
		"a training job of too large a node": {
			text:   "kind: Workflow\nmetadata: {name: wf}\nspec:\n  tasks:\n  - {name: fit, train: {runtime: torch-distributed, command: [\"true\"], resourcesPerNode: {cpu: 8}}}\n",
			object: "Workflow/wf", field: "spec.tasks[0].train.resourcesPerNode", says: "(1 nodes of cpu 8",
		},
		"a TrainJob": {
			text:   "kind: TrainJob\nmetadata: {name: tj}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer: {command: [\"true\"], numNodes: 8}\n",
			object: "TrainJob/tj", field: "spec.trainer.numNodes", says: "the job asks for cpu 8",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			docs, err := Read("in.yaml", strings.NewReader("apiVersion: kiln.dev/v1alpha1\n"+tc.text))
			if err != nil {
				t.Fatal(err)
			}
			plans, err := CheckDocuments(docs, nil)
			if err != nil {
				t.Fatal(err)
			}
			errs := apiv1.Errors(plans[0].Plan.CheckFits(resource.Request{MilliCPU: 2000, Memory: 1 << 40}))
			if len(errs) != 1 {
				t.Fatalf("CheckFits = %v, want one error", errs)
			}
			e := errs[0]
			if e.Code != apiv1.CodeTooLarge || e.File != "in.yaml" || e.Object != tc.object || e.Field != tc.field || !strings.Contains(e.Message, tc.says) {
				t.Errorf("CheckFits = %q (%s %s %s %s), want %s in.yaml %s %s saying %q", e, e.Code, e.File, e.Object, e.Field, apiv1.CodeTooLarge, tc.object, tc.field, tc.says)
			}
		})
	}
}
