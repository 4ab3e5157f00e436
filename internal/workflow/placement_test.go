package workflow

import (
	"slices"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestImagesAndPodTemplates(t *testing.T) {
	p, errs := compileText(t, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: images}
spec:
  image: base:1
  podTemplate: {metadata: {labels: {from: workflow}}}
  tasks:
  - {name: inherits, command: ["true"]}
  - name: own
    command: ["true"]
    image: own:2
    podTemplate:
      metadata: {labels: {from: task}}
      spec: {serviceAccountName: trainer}
  - name: trains
    train: {runtime: torch-distributed, image: trainer:3, command: [torchrun, t.py]}
`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for i, want := range []struct{ image, field, label string }{
		{"base:1", "spec.image", "workflow"},
		{"own:2", "spec.tasks[1].image", "task"},
		{"trainer:3", "spec.tasks[2].train.image", "workflow"},
	} {
		task := p.Tasks[i]
		if task.Image != want.image || task.ImageField != want.field || task.PodTemplate.Metadata.Labels["from"] != want.label {
			t.Errorf("task %d: image %q from %s, template label %q; want %+v", i, task.Image, task.ImageField,
				task.PodTemplate.Metadata.Labels["from"], want)
		}
	}
	if p.Tasks[1].PodTemplate.Spec.ServiceAccountName != "trainer" {
		t.Error("the task's pod spec was not kept")
	}
	if err := RequireImages(&Document{File: "wf.yaml"}, p); err != nil {
		t.Errorf("every task has an image, yet: %v", err)
	}
}

func TestRequireImagesNamesEachTask(t *testing.T) {
	p, errs := compileText(t, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: noimages}
spec:
  tasks:
  - {name: a, command: ["true"]}
  - {name: b, command: ["true"], image: ok:1}
  - {name: c, train: {runtime: plain, command: ["true"]}}
`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got := apiv1.Errors(RequireImages(&Document{File: "wf.yaml"}, p))
	if len(got) != 2 || got[0].Field != "spec.tasks[0].image" || got[1].Field != "spec.tasks[2].train.image" ||
		got[0].Code != apiv1.CodeImageRequired || got[0].File != "wf.yaml" || !strings.Contains(got[1].Message, "task c") {
		t.Fatalf("got %v", got)
	}
	// A pod template with an unknown field is a spec error like any other.
	_, errs = compileText(t, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: badtemplate}
spec:
  tasks:
  - {name: a, command: ["true"], image: x, podTemplate: {spec: {nodeSelektor: {a: b}}}}
`)
	if len(errs) != 1 || errs[0].Code != apiv1.CodeUnknownField || errs[0].Field != "spec.tasks[0].podTemplate.spec.nodeSelektor" {
		t.Errorf("a misspelt pod spec field: %v", errs)
	}
}

func TestMapItemsRunInTheMapsImage(t *testing.T) {
	p, errs := compileText(t, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: maps}
spec:
  image: base:1
  tasks:
  - {name: own, command: [echo, "{{item}}"], image: own:2, forEach: {items: [a, b]}, podTemplate: {metadata: {labels: {from: task}}}}
  - {name: inherits, command: [echo, "{{item}}"], forEach: {range: {count: 2}}}
`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for i, want := range []string{"own:2", "base:1"} {
		if got := p.Tasks[i].Map.Child.Image; got != want {
			t.Errorf("the items of map %d run in %q, want %q", i, got, want)
		}
	}
	if pt := p.Tasks[0].Map.Child.PodTemplate; pt == nil || pt.Metadata.Labels["from"] != "task" {
		t.Errorf("the items' pod template = %+v, want the map task's", pt)
	}
}

func TestRequireImagesSkipsTasksThatMakeNoPod(t *testing.T) {
	checked, errs := compileFiles(t, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: podless}
spec:
  tasks:
  - {name: work, command: ["true"], image: ok:1}
  - {name: wait, gate: {approve: {}}, dependsOn: [work]}
  - {name: nap, gate: {sleep: {duration: 1s}}}
  - {name: inner, workflow: {name: child}}
  - {name: each, workflow: {name: child}, forEach: {items: [a]}}
  onExit:
  - {name: note, command: ["true"]}
---
apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: child}
spec:
  tasks:
  - {name: deep, command: ["true"]}
`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(checked) != 1 {
		t.Fatalf("compiled %d runnable documents, want podless alone", len(checked))
	}
	got := apiv1.Errors(RequireImages(checked[0].Doc, checked[0].Plan))
	var where []string
	for _, e := range got {
		where = append(where, e.Object+" "+e.Field)
	}
	// The gates, the subworkflow task and the exit node make no pod; the
	// tasks they run do.
	want := []string{"Workflow/child spec.tasks[0].image", "Workflow/podless spec.onExit[0].image"}
	slices.Sort(where)
	if !slices.Equal(where, want) {
		t.Errorf("refused %v, want %v", where, want)
	}
}
