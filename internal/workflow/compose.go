package workflow

import (
	"fmt"
	"slices"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/dag"
)

// Library holds the workflows that tasks may run as subworkflows, by name.
type Library map[string]LibraryEntry

// LibraryEntry is one workflow of a Library and the document it was read from.
type LibraryEntry struct {
	Doc      *Document
	Workflow *apiv1.Workflow
}

// trigger compiles a task's trigger rule.
func (c *checker) trigger(field string, t *apiv1.Task, out *Task) {
	out.Trigger = t.Trigger
	switch {
	case t.Trigger == "":
		out.Trigger = apiv1.TriggerAllSucceeded
	case !slices.Contains(apiv1.TriggerRules(), t.Trigger):
		c.add(apiv1.CodeInvalidValue, field+".trigger", "trigger is %q; it is one of %s", t.Trigger, triggerNames())
	}
	if t.Depends != "" && (t.Trigger != "" || len(t.DependsOn) > 0) {
		c.add(apiv1.CodeInvalidValue, field+".depends", "depends replaces dependsOn and trigger: set depends alone")
	}
}

func triggerNames() string {
	var names []string
	for _, r := range apiv1.TriggerRules() {
		names = append(names, string(r))
	}
	return strings.Join(names, ", ")
}

// exit compiles a workflow's onExit tasks into the node that runs them,
// after every other task, whatever became of them.
func (c *checker) exit(p *Plan, tasks []apiv1.Task, params map[string]bool) {
	c.inExit, c.exitMain = true, p
	sub := &Plan{Workflow: p.Workflow, FailFast: true, File: p.File, Object: p.Object}
	c.tasks(sub, "spec.onExit", tasks, params)
	c.inExit, c.exitMain = false, nil
	top := len(p.Tasks)
	spec := &apiv1.Task{Name: ExitNode}
	p.Tasks = append(p.Tasks, Task{Spec: spec, Kind: apiv1.NodeKindExit, Trigger: apiv1.TriggerAllDone, Sub: &Sub{Name: ExitNode, Plan: sub}})
	p.Index[ExitNode] = top
	if p.Graph == nil {
		return
	}
	g := dag.New(top + 1)
	for i := range top {
		for _, u := range p.Graph.Upstream(i) {
			g.AddEdge(u, i)
		}
		g.AddEdge(i, top)
	}
	p.Graph = g
}

// workflowOutputs checks spec.outputs: names, and templates over the
// workflow's tasks.
func (c *checker) workflowOutputs(field string, o *apiv1.WorkflowOutputs, p *Plan, params map[string]bool) {
	if o == nil {
		return
	}
	// A list, not a map: the problems come in the same order every time.
	for _, g := range []struct {
		kind string
		list []apiv1.WorkflowOutput
	}{{"parameters", o.Parameters}, {"artifacts", o.Artifacts}} {
		kind := g.kind
		seen := map[string]bool{}
		for i, out := range g.list {
			f := fmt.Sprintf("%s.%s[%d]", field, kind, i)
			c.outputName(f+".name", out.Name, seen)
			if out.Value == "" {
				c.add(apiv1.CodeRequired, f+".value", "value is required: a template such as {{tasks.<task>.outputs.%s.<name>}}", kind)
			}
			c.refs(f+".value", out.Value, -1, p, params)
		}
	}
}

// DeclaredOutputs are a plan's workflow outputs as a task's outputs: what
// a subworkflow task gives.
func (p *Plan) DeclaredOutputs() *apiv1.Outputs {
	o := p.Outputs
	if o == nil {
		return nil
	}
	out := &apiv1.Outputs{}
	for _, v := range o.Parameters {
		out.Parameters = append(out.Parameters, apiv1.OutputParameter{Name: v.Name})
	}
	for _, v := range o.Artifacts {
		out.Artifacts = append(out.Artifacts, apiv1.Artifact{Name: v.Name, Path: v.Name})
	}
	return out
}

// subworkflows compiles the workflow each subworkflow task of p runs,
// and refuses one that is missing or runs itself.
func (c *checker) subworkflows(base string, p *Plan) {
	for i := range p.Tasks {
		t := &p.Tasks[i]
		for k, d := range t.Declared {
			d.Plan = c.resolve(fmt.Sprintf("%s[%d].dynamic.workflows[%d]", base, i, k), d.Name)
		}
		runsSub := t.Kind == apiv1.NodeKindSubworkflow || (t.Map != nil && t.Map.Child.Kind == apiv1.NodeKindSubworkflow)
		if !runsSub || t.Sub == nil || t.Sub.Name == "" {
			continue // a map's child shares its task's Sub: compiling one compiles both
		}
		t.Sub.Plan = c.resolve(fmt.Sprintf("%s[%d].workflow.name", base, i), t.Sub.Name)
		if t.Sub.Plan != nil {
			c.subParams(fmt.Sprintf("%s[%d].workflow.params", base, i), t.Sub)
		}
	}
}

// resolve compiles the workflow named name, from the files or the
// project's stored templates, for the task at field; nil if it cannot.
func (c *checker) resolve(field, name string) *Plan {
	if slices.Contains(c.running, name) {
		c.addHint(apiv1.CodeSubworkflow, field, "a workflow cannot run itself, directly or through others",
			"workflows run each other in a cycle: %s -> %s", strings.Join(c.running, " -> "), name)
		return nil
	}
	entry, ok := c.lib[name]
	if !ok {
		entry, ok = c.stored.get(name)
	}
	if !ok {
		c.missing(field, name)
		return nil
	}
	return c.compileSub(entry)
}

// missing refuses a subworkflow found neither in the files nor, when
// they are looked up, among the project's stored templates.
func (c *checker) missing(field, name string) {
	if c.stored == nil || c.stored.find == nil {
		c.addHint(apiv1.CodeSubworkflow, field, "add a Workflow of that name to the files, or store a WorkflowTemplate with kiln apply (kiln validate looks among a project's templates with --project P)",
			"no Workflow named %q is in the files%s", name, c.lib.known())
		return
	}
	c.addHint(apiv1.CodeSubworkflow, field, "add a Workflow of that name to the files, or store a WorkflowTemplate with kiln apply -f FILE --project P",
		"%q is neither a Workflow in the files%s nor a WorkflowTemplate stored in the project", name, c.lib.known())
}

// compileSub compiles a subworkflow, with its own document for errors.
func (c *checker) compileSub(e LibraryEntry) *Plan {
	sub := &checker{
		doc: e.Doc, runtimes: c.runtimes, lib: c.lib, stored: c.stored,
		running: append(slices.Clone(c.running), e.Workflow.Metadata.Name),
	}
	p := sub.workflow(e.Workflow)
	c.errs = append(c.errs, sub.errs...)
	c.tally.merge(&sub.tally)
	if len(sub.errs) > 0 {
		return nil
	}
	return p
}

// subParams checks the params a subworkflow task gives: each declared by
// the subworkflow, each without a default given.
func (c *checker) subParams(field string, s *Sub) {
	declared := map[string]bool{}
	for _, p := range s.Plan.Workflow.Spec.Params {
		declared[p.Name] = p.Default != nil
	}
	given := map[string]bool{}
	for i, v := range s.Params {
		if _, ok := declared[v.Name]; !ok {
			c.add(apiv1.CodeUnknownParam, fmt.Sprintf("%s[%d].name", field, i), "workflow %q declares no param %q", s.Name, v.Name)
		}
		if given[v.Name] {
			c.add(apiv1.CodeDuplicate, fmt.Sprintf("%s[%d].name", field, i), "param %q is given twice", v.Name)
		}
		given[v.Name] = true
	}
	for name, hasDefault := range declared {
		if !hasDefault && !given[name] {
			c.addHint(apiv1.CodeMissingParam, field, fmt.Sprintf("give it under workflow.params: [{name: %s, value: ...}]", name),
				"workflow %q needs param %q, which has no default", s.Name, name)
		}
	}
}

func (l Library) known() string {
	if len(l) == 0 {
		return ""
	}
	var names []string
	for n := range l {
		names = append(names, n)
	}
	slices.Sort(names)
	return " (it holds " + strings.Join(names, ", ") + ")"
}

// Uses lists, by name, the subworkflows a plan runs, directly or through
// others, each once.
func (p *Plan) Uses() map[string]*apiv1.Workflow {
	out := map[string]*apiv1.Workflow{}
	var walk func(*Plan)
	walk = func(p *Plan) {
		for _, t := range p.Tasks {
			if t.Sub != nil && t.Sub.Plan != nil {
				if t.Kind == apiv1.NodeKindSubworkflow || (t.Map != nil && t.Map.Child.Kind == apiv1.NodeKindSubworkflow) {
					out[t.Sub.Name] = t.Sub.Plan.Workflow
				}
				walk(t.Sub.Plan)
			}
			for _, d := range t.Declared {
				if d.Plan != nil {
					out[d.Name] = d.Plan.Workflow
					walk(d.Plan)
				}
			}
		}
	}
	walk(p)
	return out
}
