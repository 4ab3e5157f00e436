package workflow

import (
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
)

const elasticRuntime = `apiVersion: kiln.dev/v1alpha1
kind: TrainingRuntime
metadata: {name: el}
spec:
  mlPolicy:
    torch: {numProcPerNode: 1, elasticPolicy: {minNodes: 2, maxNodes: 4}}
---
apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: el}
  trainer: {command: [torchrun, t.py], resourcesPerNode: {cpu: 1}}
`

// An elastic job is sized from minNodes to maxNodes hosts: it fits a
// machine that holds minNodes of them, and is refused, naming the
// runtime, by one that does not.
func TestElasticJobFitsAtItsMinimum(t *testing.T) {
	t.Parallel()
	docs, err := Read("in.yaml", strings.NewReader(elasticRuntime))
	if err != nil {
		t.Fatal(err)
	}
	plans, err := CheckDocuments(docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := plans[0].Plan
	task := &p.Tasks[0]
	if task.MinHosts != 2 || task.MaxHosts != 4 || task.Request.MilliCPU != 4000 || task.Least().MilliCPU != 2000 {
		t.Errorf("task: hosts %d to %d, request %s, least %s; want 2 to 4, cpu 4 and cpu 2", task.MinHosts, task.MaxHosts, task.Request, task.Least())
	}
	if err := p.CheckFits(resource.Request{MilliCPU: 2000, Memory: 1 << 40}); err != nil {
		t.Errorf("CheckFits on 2 CPUs = %v, want room for minNodes", err)
	}
	errs := apiv1.Errors(p.CheckFits(resource.Request{MilliCPU: 1000, Memory: 1 << 40}))
	if len(errs) != 1 || errs[0].Code != apiv1.CodeTooLarge || errs[0].Field != "spec.runtimeRef.name" || !strings.Contains(errs[0].Message, "minNodes 2") {
		t.Errorf("CheckFits on 1 CPU = %v, want %s naming the runtime and minNodes", errs, apiv1.CodeTooLarge)
	}
}
