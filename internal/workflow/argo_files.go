package workflow

import (
	"encoding/json"
	"slices"

	"sigs.k8s.io/yaml"

	argov1 "kiln.dev/kiln/api/argo/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// argoSameFiles lets an Argo Workflow call the templates of a
// WorkflowTemplate submitted in the same files (templateRef,
// workflowTemplateRef), as Argo would once the template is stored: when
// docs, translated, hold an Argo Workflow, the kiln templates made of
// Argo WorkflowTemplates are run as the Workflows it runs, and those
// it does not run are left out.
func argoSameFiles(docs []Document) []Document {
	var runs []string
	argoRun := false
	for i := range docs {
		d := &docs[i]
		if fromArgo(d, argov1.KindWorkflow) {
			argoRun = true
		}
		if d.Kind == apiv1.KindWorkflow {
			runs = append(runs, workflowsRun(d.JSON)...)
		}
	}
	if !argoRun {
		return docs
	}
	stored := map[string]*apiv1.WorkflowTemplate{}
	for i := range docs {
		d := &docs[i]
		if isArgoTemplate(d) {
			wt := &apiv1.WorkflowTemplate{}
			if json.Unmarshal(d.JSON, wt) == nil {
				stored[d.Name] = wt
			}
		}
	}
	// The workflows run, through the templates that run others.
	reached := map[string]bool{}
	for len(runs) > 0 {
		name := runs[0]
		runs = runs[1:]
		if wt, ok := stored[name]; ok && !reached[name] {
			reached[name] = true
			js, _ := json.Marshal(wt)
			runs = append(runs, workflowsRun(js)...)
		}
	}
	out := make([]Document, 0, len(docs))
	// The templates' ignored fields are named with the workflow that
	// runs them: kiln run names those of the document it runs.
	var ignored []Ignored
	runner := -1
	for _, d := range docs {
		if !isArgoTemplate(&d) {
			if runner < 0 && fromArgo(&d, argov1.KindWorkflow) {
				runner = len(out)
			}
			out = append(out, d)
			continue
		}
		ignored = append(ignored, d.From.Ignored...)
		if !reached[d.Name] {
			continue
		}
		from := *d.From
		from.Ignored, d.From = nil, &from
		wt := stored[d.Name]
		wf := &apiv1.Workflow{TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: apiv1.KindWorkflow}, Metadata: wt.Metadata, Spec: wt.Spec}
		js, err := json.Marshal(wf)
		if err != nil {
			continue
		}
		raw, err := yaml.JSONToYAML(js)
		if err != nil {
			continue
		}
		d.Kind, d.JSON, d.Raw = apiv1.KindWorkflow, js, raw
		out = append(out, d)
	}
	if len(ignored) > 0 {
		from := *out[runner].From
		from.Ignored = uniqueIgnored(append(slices.Clone(from.Ignored), ignored...))
		out[runner].From = &from
	}
	return out
}

func fromArgo(d *Document, kinds ...string) bool {
	return d.From != nil && d.From.APIVersion == argov1.APIVersion && slices.Contains(kinds, d.From.Kind)
}

func isArgoTemplate(d *Document) bool {
	return d.Kind == apiv1.KindWorkflowTemplate && fromArgo(d, argov1.KindWorkflowTemplate, argov1.KindClusterWorkflowTemplate)
}

// workflowsRun lists the workflows a kiln workflow's tasks run.
func workflowsRun(js []byte) []string {
	var wf struct {
		Spec struct {
			Tasks, OnExit []struct {
				Workflow *struct{ Name string } `json:"workflow"`
			}
		}
	}
	if json.Unmarshal(js, &wf) != nil {
		return nil
	}
	var out []string
	for _, t := range append(wf.Spec.Tasks, wf.Spec.OnExit...) {
		if t.Workflow != nil {
			out = append(out, t.Workflow.Name)
		}
	}
	return out
}
