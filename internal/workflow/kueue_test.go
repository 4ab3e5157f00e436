package workflow

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TestKueueQueueLabelReachesThePodTemplate: a TrainJob's queue label
// (metadata.labels, as Kueue reads a Trainer TrainJob's), a workflow
// train node's (its pod template's) and a Kubeflow Trainer TrainJob's all
// end on the task's pod template, where the Kubernetes backend reads them;
// the local backend names them as ignored.
func TestKueueQueueLabelReachesThePodTemplate(t *testing.T) {
	t.Parallel()
	var checked []Checked
	for _, doc := range []string{`apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata:
  name: tj
  labels: {kueue.x-k8s.io/queue-name: team-a, owner: ml}
spec:
  runtimeRef: {name: plain}
  trainer: {image: busybox, command: [sh, -c, "true"]}
  podTemplate: {metadata: {labels: {tier: gpu}}}
`, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  tasks:
  - name: fit
    podTemplate: {metadata: {labels: {kueue.x-k8s.io/queue-name: team-b}}}
    train: {runtime: plain, image: busybox, command: [sh, -c, "true"]}
  - {name: plain, image: busybox, command: ["true"]}
`, `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: t2
  labels: {kueue.x-k8s.io/queue-name: team-c}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {image: busybox, command: [sh, -c, "true"]}
`} {
		c, errs := compileFiles(t, doc)
		if len(errs) > 0 || len(c) != 1 {
			t.Fatalf("%d plans, errors: %v", len(c), errs)
		}
		checked = append(checked, c[0])
	}
	want := map[string]struct {
		queue   string
		ignored []string
	}{
		"tj": {"team-a", []string{"metadata.labels[kueue.x-k8s.io/queue-name]"}},
		"wf": {"team-b", []string{"task fit podTemplate.metadata.labels[kueue.x-k8s.io/queue-name]"}},
		"t2": {"team-c", []string{"spec.trainer.image", "metadata.labels[kueue.x-k8s.io/queue-name]"}},
	}
	for _, c := range checked {
		w := want[c.Doc.Name]
		var task *Task
		for i := range c.Plan.Tasks {
			if c.Plan.Tasks[i].Train != nil {
				task = &c.Plan.Tasks[i]
			}
		}
		if task == nil || task.PodTemplate == nil || task.PodTemplate.Metadata.Labels[apiv1.LabelKueueQueue] != w.queue {
			t.Errorf("%s: the train task's pod template %+v, want queue %s", c.Doc.Name, task, w.queue)
		}
		var local []string
		for _, i := range IgnoredOn("local", c.Ignored) {
			local = append(local, i.Field)
		}
		if !cmp.Equal(local, w.ignored) {
			t.Errorf("%s: ignored locally %v, want %v", c.Doc.Name, local, w.ignored)
		}
		if kube := IgnoredOn("kubernetes", c.Ignored); len(kube) != 0 {
			t.Errorf("%s: the kubernetes backend ignores %v", c.Doc.Name, kube)
		}
	}
	tj := checked[0]
	if c := tj.Plan.Tasks[0].PodTemplate.Metadata.Labels["tier"]; c != "gpu" {
		t.Errorf("the TrainJob's own pod template label tier is %q, want gpu kept", c)
	}
}
