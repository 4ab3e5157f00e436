package workflow

import (
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// templateRefRoot is a workflow that runs a stored WorkflowTemplate
// (spec.workflowTemplateRef) with the workflow's arguments.
func (a *argoConv) templateRefRoot() *argoOut {
	o := a.newOut(a.name, false)
	ref := a.spec.WorkflowTemplateRef
	if ref.ClusterScope {
		a.c.ignore("spec.workflowTemplateRef.clusterScope", "kiln looks the template up in the run's project")
	}
	if ref.Name == "" {
		a.c.fail(apiv1.CodeRequired, "spec.workflowTemplateRef.name", "the reference names no WorkflowTemplate", "set name")
		return o
	}
	if len(a.spec.Templates) > 0 || a.spec.Entrypoint != "" {
		a.c.fail(apiv1.CodeUnsupported, "spec.workflowTemplateRef", "kiln runs the referenced template as it is stored, not merged with templates or an entrypoint of the workflow",
			"drop spec.templates and spec.entrypoint, or drop workflowTemplateRef")
	}
	task := apiv1.Task{Name: ref.Name, Workflow: &apiv1.SubWorkflow{Name: ref.Name}}
	if args := a.spec.Arguments; args != nil {
		for i, p := range args.Parameters {
			f := fmt.Sprintf("spec.arguments.parameters[%d]", i)
			o.wf.Spec.Params = append(o.wf.Spec.Params, apiv1.Param{Name: p.Name, Default: a.paramValue(f, p)})
			o.mapField(fmt.Sprintf("spec.params[%d]", i), f)
			task.Workflow.Params = append(task.Workflow.Params, apiv1.ParamValue{Name: p.Name, Value: "{{params." + p.Name + "}}"})
		}
	}
	o.wf.Spec.Tasks = []apiv1.Task{task}
	o.mapField("spec.tasks[0]", "spec.workflowTemplateRef")
	a.exitHandler(o)
	a.workflowLimits(o)
	return o
}

// storedRoots are the kiln templates an Argo WorkflowTemplate stores:
// its entrypoint's workflow under its own name, and each template as
// <name>-<template>, which a templateRef calls.
func (a *argoConv) storedRoots() []*argoOut {
	var out []*argoOut
	if a.spec.Entrypoint != "" {
		out = append(out, a.root(a.name, a.spec.Entrypoint))
	}
	for i := range a.spec.Templates {
		t := &a.spec.Templates[i]
		if t.DAG != nil || len(t.Steps) > 0 {
			a.sub(t, i)
			continue
		}
		o := a.newOut(a.name+"-"+kilnName(t.Name), true)
		o.mapField("metadata.name", fmt.Sprintf("spec.templates[%d].name", i))
		if t.Inputs != nil {
			for k, p := range t.Inputs.Parameters {
				o.wf.Spec.Params = append(o.wf.Spec.Params, apiv1.Param{Name: p.Name, Default: a.paramValue("", p), Description: p.Description})
				o.mapField(fmt.Sprintf("spec.params[%d]", k), fmt.Sprintf("spec.templates[%d].inputs.parameters[%d]", i, k))
			}
		}
		a.body(o, t, i, "spec.tasks")
		a.leafOutputs(o, kilnName(t.Name))
		a.globalParams(o)
		out = append(out, o)
	}
	return out
}

// leafOutputs gives a workflow that runs one task its task's outputs.
func (a *argoConv) leafOutputs(o *argoOut, task string) {
	if len(o.wf.Spec.Tasks) != 1 || o.wf.Spec.Tasks[0].Outputs == nil {
		return
	}
	outs := &apiv1.WorkflowOutputs{}
	for _, p := range o.wf.Spec.Tasks[0].Outputs.Parameters {
		outs.Parameters = append(outs.Parameters, apiv1.WorkflowOutput{Name: p.Name, Value: "{{tasks." + task + ".outputs.parameters." + p.Name + "}}"})
	}
	for _, art := range o.wf.Spec.Tasks[0].Outputs.Artifacts {
		outs.Artifacts = append(outs.Artifacts, apiv1.WorkflowOutput{Name: art.Name, Value: "{{tasks." + task + ".outputs.artifacts." + art.Name + "}}"})
	}
	o.wf.Spec.Outputs = outs
}

// globalParams declares the workflow parameters a generated workflow
// reads as its params, defaulting to their values in the document.
func (a *argoConv) globalParams(o *argoOut) {
	for _, g := range o.uses {
		p := apiv1.Param{Name: workflowParam(g)}
		if args := a.spec.Arguments; args != nil {
			for _, ap := range args.Parameters {
				if ap.Name == g {
					p.Default = a.paramValue("", ap)
				}
			}
		}
		o.wf.Spec.Params = append(o.wf.Spec.Params, p)
	}
}
