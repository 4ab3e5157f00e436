package workflow

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	argov1 "kiln.dev/kiln/api/argo/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// argoCall is one call of a template, from a DAG task or a step, as it
// becomes a kiln task of o's list at field kiln.
type argoCall struct {
	site *argov1.Call
	// field is the call's path as written (spec.templates[0].dag.tasks[2]).
	field string
	// depends is the kiln depends expression of its place: a DAG task's
	// dependencies, or the steps of the group before.
	depends string
	// parallelism is the calling template's.
	parallelism *int64
}

// body writes template t's children into o: a DAG's tasks, a steps
// template's steps, or one task calling t itself (a container, script or
// suspend run alone).
func (a *argoConv) body(o *argoOut, t *argov1.Template, ti int, list string) {
	tf := fmt.Sprintf("spec.templates[%d]", ti)
	switch {
	case t.DAG != nil:
		a.dagBody(o, t, tf, list)
	case len(t.Steps) > 0:
		a.stepsBody(o, t, tf, list)
	default:
		site := &argov1.Call{Name: t.Name, Template: t.Name, Arguments: inputsAsArguments(t)}
		if args := a.spec.Arguments; args != nil && !o.sub && list == "spec.tasks" && len(args.Artifacts) > 0 {
			if site.Arguments == nil {
				site.Arguments = &argov1.Arguments{}
			}
			site.Arguments.Artifacts = args.Artifacts // the entrypoint's, run alone
		}
		a.call(o, list, argoCall{site: site, field: tf})
	}
}

// inputsAsArguments passes a template's inputs on as they come: the
// entrypoint, run alone, reads the workflow's.
func inputsAsArguments(t *argov1.Template) *argov1.Arguments {
	if t.Inputs == nil {
		return nil
	}
	args := &argov1.Arguments{}
	for _, p := range t.Inputs.Parameters {
		v, _ := json.Marshal("{{inputs.parameters." + p.Name + "}}")
		args.Parameters = append(args.Parameters, argov1.Parameter{Name: p.Name, Value: v})
	}
	return args
}

// parallelismIgnored names a DAG's or steps' parallelism, which kiln
// keeps for its loops only.
func (a *argoConv) parallelismIgnored(t *argov1.Template, tf string) {
	if t.Parallelism != nil {
		a.c.note(tf+".parallelism", "kiln caps each loop's items at once by it (maxParallel); the template's other tasks start as the pool admits them")
	}
}

func (a *argoConv) dagBody(o *argoOut, t *argov1.Template, tf, list string) {
	a.parallelismIgnored(t, tf)
	d := t.DAG
	if d.FailFast != nil && list == "spec.tasks" {
		o.wf.Spec.FailFast = d.FailFast
	}
	keep := a.dagTargets(d, tf)
	continues := map[string]bool{}
	for _, task := range d.Tasks {
		continues[task.Name] = task.ContinueOn != nil && (task.ContinueOn.Failed || task.ContinueOn.Error)
	}
	for j := range d.Tasks {
		task := &d.Tasks[j]
		if keep != nil && !keep[task.Name] {
			continue
		}
		f := fmt.Sprintf("%s.dag.tasks[%d]", tf, j)
		dep := ""
		switch {
		case task.Depends != "":
			dep = a.argoDepends(f+".depends", task.Depends)
		case len(task.Dependencies) > 0:
			dep = dependsOnAll(task.Dependencies, continues)
		}
		a.call(o, list, argoCall{site: &task.Call, field: f, depends: dep, parallelism: t.Parallelism})
	}
}

func (a *argoConv) stepsBody(o *argoOut, t *argov1.Template, tf, list string) {
	a.parallelismIgnored(t, tf)
	if t.FailFast != nil && list == "spec.tasks" {
		o.wf.Spec.FailFast = t.FailFast
	}
	var before []string
	continues := map[string]bool{}
	for g, group := range t.Steps {
		var names []string
		for s := range group {
			step := &group[s]
			f := fmt.Sprintf("%s.steps[%d][%d]", tf, g, s)
			a.call(o, list, argoCall{site: &step.Call, field: f, depends: dependsOnAll(before, continues), parallelism: t.Parallelism})
			names = append(names, step.Name)
			continues[step.Name] = step.ContinueOn != nil && (step.ContinueOn.Failed || step.ContinueOn.Error)
		}
		before = names
	}
}

// dependsOnAll is the depends expression of tasks that must each have
// succeeded or been skipped (Argo's dependencies), or, where the task
// continues on failure, ended at all.
func dependsOnAll(names []string, continues map[string]bool) string {
	parts := make([]string, 0, len(names))
	for _, n := range names {
		k := kilnName(n)
		if continues[n] {
			parts = append(parts, "("+k+" || "+k+".Failed)")
		} else {
			parts = append(parts, k)
		}
	}
	return strings.Join(parts, " && ")
}

// argoDepends rewrites Argo's depends results that kiln spells otherwise.
func (a *argoConv) argoDepends(field, s string) string {
	r := strings.NewReplacer(".Errored", ".Failed", ".Omitted", ".Skipped")
	if strings.Contains(s, ".Daemoned") {
		a.c.fail(apiv1.CodeUnsupported, field, "kiln runs no daemons, so no task is ever Daemoned", "drop the .Daemoned operand")
	}
	out := r.Replace(s)
	if out != s {
		a.c.note(field, "kiln does not tell an error from a failure, nor an omitted task from a skipped one: Errored reads as Failed, Omitted as Skipped")
	}
	// Task names as kiln names them; results (.Succeeded) stay.
	return dependsNameRE.ReplaceAllStringFunc(out, func(m string) string {
		if strings.HasPrefix(m, ".") {
			return m
		}
		return kilnName(m)
	})
}

// call makes the kiln task (or tasks: an exit handler follows it) of one
// call, appended to o's list.
func (a *argoConv) call(o *argoOut, list string, c argoCall) {
	site := c.site
	if len(site.Inline) > 0 {
		a.c.fail(apiv1.CodeUnsupported, c.field+".inline", "kiln calls templates by name", "move the inline template to spec.templates and call it with template:")
		return
	}
	exit := a.exitHook(c.field+".hooks", site.Hooks, site.OnExit)
	t, ti, ref := a.callee(c)
	if t == nil {
		return
	}
	sc := a.bodyScope(o, c.field)
	task := apiv1.Task{Name: a.taskName(c.field+".name", site.Name), Depends: c.depends}
	k := len(*a.list(o, list))
	tk := fmt.Sprintf("%s[%d]", list, k)
	o.mapField(tk, c.field)
	o.mapField(tk+".name", c.field+".name")
	o.mapField(tk+".depends", c.field+".depends")
	args := a.arguments(sc, c.field, site.Arguments)
	tf := fmt.Sprintf("spec.templates[%d]", ti)
	switch {
	case ref != "":
		task.Workflow = &apiv1.SubWorkflow{Name: ref, Params: args.params()}
		o.mapField(tk+".workflow", c.field+".templateRef")
	case t.Container != nil || t.Script != nil:
		a.leaf(o, &task, tk, t, tf, args, c)
	case t.Suspend != nil:
		a.suspend(&task, t, tf)
		a.gateTimeout(o, task.Gate, t, tf)
		o.mapField(tk+".gate", tf+".suspend")
		a.groupSettings(t, tf)
	case t.DAG != nil || len(t.Steps) > 0:
		a.subworkflow(o, &task, t, ti, args)
		o.mapField(tk+".workflow", c.field+".template")
		a.groupSettings(t, tf)
	default:
		a.c.fail(apiv1.CodeUnsupported, tf+"."+templateKind(t), "kiln runs container, script, dag, steps and suspend templates only",
			"run the work as a container or script template")
		return
	}
	a.loop(sc, &task, tk, c)
	a.gathered(c)
	if site.When != "" {
		task.When = a.when(sc, c.field+".when", site.When)
		o.mapField(tk+".when", c.field+".when")
	}
	if site.ContinueOn != nil && !site.ContinueOn.Failed && !site.ContinueOn.Error {
		a.c.ignore(c.field+".continueOn", "it lets nothing go on")
	}
	l := a.list(o, list)
	*l = append(*l, task)
	if exit != "" {
		a.c.note(c.field+".onExit", "kiln runs the handler after the task whatever its result, but not once the run has stopped starting tasks (a task failed, and failFast)")
		a.stepExit(o, list, c, task.Name, exit)
	}
}

// list is o's task list named list: spec.tasks or spec.onExit.
func (a *argoConv) list(o *argoOut, list string) *[]apiv1.Task {
	if list == "spec.onExit" {
		return &o.wf.Spec.OnExit
	}
	return &o.wf.Spec.Tasks
}

// templateKind names what a template is, by the field that says it.
func templateKind(t *argov1.Template) string {
	for _, k := range []struct {
		name string
		set  bool
	}{
		{"resource", len(t.Resource) > 0},
		{"http", len(t.HTTP) > 0},
		{"data", len(t.Data) > 0},
		{"containerSet", len(t.ContainerSet) > 0},
		{"plugin", len(t.Plugin) > 0},
	} {
		if k.set {
			return k.name
		}
	}
	return "name"
}

// callee is the template a call runs: one of this document's, with its
// index, or ref, the name of a workflow (a stored kiln template) that
// stands for a template of another WorkflowTemplate.
func (a *argoConv) callee(c argoCall) (t *argov1.Template, ti int, ref string) {
	site := c.site
	if site.TemplateRef != nil {
		r := site.TemplateRef
		if r.ClusterScope {
			a.c.ignore(c.field+".templateRef.clusterScope", "kiln looks the template up in the run's project")
		}
		if r.Name == "" || r.Template == "" {
			a.c.fail(apiv1.CodeRequired, c.field+".templateRef", "a templateRef names a WorkflowTemplate and one of its templates", "set name and template")
			return nil, -1, ""
		}
		return &argov1.Template{}, -1, kilnName(r.Name + "-" + r.Template)
	}
	if site.Template == "" {
		a.c.fail(apiv1.CodeRequired, c.field+".template", "the call names no template", "set template (or templateRef)")
		return nil, -1, ""
	}
	t, ti = a.template(site.Template, c.field+".template")
	return t, ti, ""
}

// argoArgs are a call's parameter arguments, rewritten for kiln, and its
// artifact arguments.
type argoArgs struct {
	names     []string
	values    map[string]string
	artifacts map[string]argov1.Artifact
}

func (g argoArgs) params() []apiv1.ParamValue {
	out := make([]apiv1.ParamValue, 0, len(g.names))
	for _, n := range g.names {
		out = append(out, apiv1.ParamValue{Name: n, Value: g.values[n]})
	}
	return out
}

// arguments reads a call's arguments, rewritten in the caller's scope.
func (a *argoConv) arguments(sc *argoScope, field string, in *argov1.Arguments) argoArgs {
	out := argoArgs{values: map[string]string{}, artifacts: map[string]argov1.Artifact{}}
	if in == nil {
		return out
	}
	for i, p := range in.Parameters {
		f := fmt.Sprintf("%s.arguments.parameters[%d]", field, i)
		if p.ValueFrom != nil {
			a.c.fail(apiv1.CodeUnsupported, f+".valueFrom", "kiln passes a value as written (templates allowed), not one read from elsewhere", "write value")
			continue
		}
		raw := p.Value
		if len(raw) == 0 {
			raw = p.Default
		}
		out.names = append(out.names, p.Name)
		out.values[p.Name] = sc.at(f + ".value").rewrite(rawText(raw))
	}
	for _, art := range in.Artifacts {
		out.artifacts[art.Name] = art
	}
	return out
}

// rawText is a JSON value as Argo reads a parameter: a string's text, or
// a number's or boolean's as written.
func rawText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// subworkflow makes task run template t (a DAG or steps) as a generated
// workflow, passing its arguments and the workflow parameters it reads.
func (a *argoConv) subworkflow(o *argoOut, task *apiv1.Task, t *argov1.Template, ti int, args argoArgs) {
	sub := a.sub(t, ti)
	if sub == nil {
		return
	}
	task.Workflow = &apiv1.SubWorkflow{Name: sub.name}
	if t.Inputs != nil {
		for i, p := range t.Inputs.Parameters {
			v, ok := args.values[p.Name]
			if !ok {
				if d := a.paramValue("", p); d != nil {
					continue // the subworkflow's param defaults to it
				}
				a.c.fail(apiv1.CodeRequired, fmt.Sprintf("spec.templates[%d].inputs.parameters[%d]", ti, i),
					fmt.Sprintf("input %q of template %q has no value: the call gives none and it has no default", p.Name, t.Name), "pass it in the call's arguments")
				continue
			}
			task.Workflow.Params = append(task.Workflow.Params, apiv1.ParamValue{Name: p.Name, Value: v})
		}
	}
	for _, g := range sub.uses {
		v := "{{params." + g + "}}"
		if o.sub {
			v = "{{params." + workflowParam(g) + "}}"
			o.use(g)
		}
		task.Workflow.Params = append(task.Workflow.Params, apiv1.ParamValue{Name: workflowParam(g), Value: v})
	}
}

// sub is the generated workflow that runs template t, made on first use.
func (a *argoConv) sub(t *argov1.Template, ti int) *argoOut {
	if o, ok := a.subs[t.Name]; ok {
		return o
	}
	if a.active[t.Name] {
		a.c.fail(apiv1.CodeUnsupported, fmt.Sprintf("spec.templates[%d]", ti),
			fmt.Sprintf("template %q calls itself, directly or through others: kiln runs no recursion", t.Name),
			"unroll the recursion into a loop (withItems, withSequence) or a retryStrategy")
		return nil
	}
	a.active[t.Name] = true
	defer delete(a.active, t.Name)
	o := a.newOut(a.name+"-"+kilnName(t.Name), true)
	o.mapField("metadata.name", fmt.Sprintf("spec.templates[%d].name", ti))
	if t.Inputs != nil {
		for i, p := range t.Inputs.Parameters {
			f := fmt.Sprintf("spec.templates[%d].inputs.parameters[%d]", ti, i)
			o.wf.Spec.Params = append(o.wf.Spec.Params, apiv1.Param{Name: p.Name, Default: a.paramValue(f, p), Description: p.Description})
			o.mapField(fmt.Sprintf("spec.params[%d]", i), f)
		}
	}
	a.body(o, t, ti, "spec.tasks")
	a.subOutputs(o, t, ti)
	a.globalParams(o)
	a.subs[t.Name] = o
	a.order = append(a.order, t.Name)
	return o
}

// subOutputs are a DAG's or steps template's outputs, read from its
// children's: the outputs of the workflow o that runs it, added to those
// its tasks' globalName outputs made.
func (a *argoConv) subOutputs(o *argoOut, t *argov1.Template, ti int) {
	if t.Outputs == nil {
		return
	}
	sc := a.bodyScope(o, fmt.Sprintf("spec.templates[%d].outputs", ti))
	if o.wf.Spec.Outputs == nil {
		o.wf.Spec.Outputs = &apiv1.WorkflowOutputs{}
	}
	outs := o.wf.Spec.Outputs
	for i, p := range t.Outputs.Parameters {
		f := fmt.Sprintf("spec.templates[%d].outputs.parameters[%d]", ti, i)
		if p.ValueFrom == nil || p.ValueFrom.Parameter == "" {
			a.c.fail(apiv1.CodeUnsupported, f+".valueFrom", "a DAG's or steps' output parameter is read from a child's: kiln reads valueFrom.parameter only",
				"set valueFrom.parameter to \"{{tasks.T.outputs.parameters.P}}\"")
			continue
		}
		o.mapField(fmt.Sprintf("spec.outputs.parameters[%d]", len(outs.Parameters)), f)
		outs.Parameters = append(outs.Parameters, apiv1.WorkflowOutput{Name: p.Name, Value: sc.at(f + ".valueFrom.parameter").rewrite(p.ValueFrom.Parameter)})
	}
	for i, art := range t.Outputs.Artifacts {
		f := fmt.Sprintf("spec.templates[%d].outputs.artifacts[%d]", ti, i)
		if art.From == "" {
			a.c.fail(apiv1.CodeUnsupported, f+".from", "a DAG's or steps' output artifact is a child's: kiln reads from only", "set from to \"{{tasks.T.outputs.artifacts.A}}\"")
			continue
		}
		o.mapField(fmt.Sprintf("spec.outputs.artifacts[%d]", len(outs.Artifacts)), f)
		outs.Artifacts = append(outs.Artifacts, apiv1.WorkflowOutput{Name: art.Name, Value: sc.at(f + ".from").rewrite(art.From)})
	}
	if len(outs.Parameters)+len(outs.Artifacts) == 0 {
		o.wf.Spec.Outputs = nil
	}
}

// taskName is the kiln task name of an Argo step or task: a DNS-1123
// label, as kiln names tasks (Argo's "A" is kiln's "a").
func (a *argoConv) taskName(field, name string) string {
	k := kilnName(name)
	if k != name && name != "" {
		a.c.note(field, fmt.Sprintf("kiln names tasks with lowercase letters, digits and '-': %q runs as %q", name, k))
	}
	return k
}

// kilnName is name as a DNS-1123 label.
func kilnName(name string) string {
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-")
}

// groupSettings names what a DAG, steps or suspend template sets that
// kiln keeps for the tasks that run programs, and the settings of every
// template it does not honour.
func (a *argoConv) groupSettings(t *argov1.Template, tf string) {
	if t.RetryStrategy != nil {
		a.c.ignore(tf+".retryStrategy", "kiln retries the tasks that run programs, not a DAG, steps or suspension: set it on the templates they call")
	}
	switch {
	case t.Suspend != nil: // the gate's timeout
	case t.ActiveDeadlineSeconds != nil:
		a.c.ignore(tf+".activeDeadlineSeconds", "kiln bounds the tasks that run programs, and the whole run (spec.activeDeadlineSeconds)")
	case t.Timeout != "":
		a.c.ignore(tf+".timeout", "kiln bounds the tasks that run programs, and the whole run (spec.activeDeadlineSeconds)")
	}
	if _, signal := a.supplied[t.Name]; t.Suspend != nil && t.Outputs != nil && len(t.Outputs.Parameters) > 0 && !signal {
		a.c.fail(apiv1.CodeUnsupported, tf+".outputs.parameters", "a suspension that waits for several supplied values, or for other outputs, has no counterpart: kiln's signal gate gives one value",
			"wait for one value (valueFrom.supplied) per suspension")
	}
	if len(t.Memoize) > 0 {
		a.c.ignore(tf+".memoize", "kiln does not reuse results by a key and a config map")
	}
	if t.Inputs != nil && len(t.Inputs.Artifacts) > 0 {
		a.c.fail(apiv1.CodeUnsupported, tf+".inputs.artifacts", "kiln passes artifacts to the tasks that run programs, not to a DAG, steps or suspension",
			"pass the artifact to the tasks that read it, from the task that writes it")
	}
	a.templateIgnored(t, tf)
}

// dependsNameRE finds the operands of a depends expression, each with
// the result after it.
var dependsNameRE = regexp.MustCompile(`\.?[A-Za-z0-9_][A-Za-z0-9_-]*`)

// dagTargets are the tasks a DAG's target needs: the targets and,
// through their dependencies, what they need; nil for every task.
func (a *argoConv) dagTargets(d *argov1.DAGTemplate, tf string) map[string]bool {
	if d.Target == "" {
		return nil
	}
	if strings.Contains(d.Target, "{{") {
		a.c.fail(apiv1.CodeUnsupported, tf+".dag.target", "kiln picks a DAG's targets when it reads the workflow, so they cannot come from a parameter",
			"write the target tasks' names, or drop target")
		return nil
	}
	deps := map[string][]string{}
	for _, t := range d.Tasks {
		deps[t.Name] = t.Dependencies
		for _, m := range dependsNameRE.FindAllString(t.Depends, -1) {
			if !strings.HasPrefix(m, ".") {
				deps[t.Name] = append(deps[t.Name], m)
			}
		}
	}
	keep := map[string]bool{}
	todo := strings.Fields(d.Target)
	for len(todo) > 0 {
		n := todo[0]
		todo = todo[1:]
		if _, ok := deps[n]; !ok {
			a.c.fail(apiv1.CodeArgoTemplate, tf+".dag.target", fmt.Sprintf("target %q is not a task of the DAG", n), "name the DAG's tasks")
			continue
		}
		if !keep[n] {
			keep[n] = true
			todo = append(todo, deps[n]...)
		}
	}
	return keep
}
