package workflow

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/template"
)

// templates checks every {{...}} reference in the fields kiln expands.
func (c *checker) templates(field string, tasks []apiv1.Task, p *Plan, params map[string]bool) {
	for i := range tasks {
		t := &tasks[i]
		base := fmt.Sprintf("%s[%d]", field, i)
		for j, s := range t.Command {
			c.refs(fmt.Sprintf("%s.command[%d]", base, j), s, i, p, params)
		}
		for j, s := range t.Args {
			c.refs(fmt.Sprintf("%s.args[%d]", base, j), s, i, p, params)
		}
		for j, e := range t.Env {
			c.refs(fmt.Sprintf("%s.env[%d].value", base, j), e.Value, i, p, params)
		}
		c.refs(base+".workingDir", t.WorkingDir, i, p, params)
		c.refs(base+".image", t.Image, i, p, params)
		if tr := t.Train; tr != nil {
			c.refs(base+".train.image", tr.Image, i, p, params)
			for j, s := range append(append([]string(nil), tr.Command...), tr.Args...) {
				c.refs(fmt.Sprintf("%s.train.command[%d]", base, j), s, i, p, params)
			}
			for j, e := range tr.Env {
				c.refs(fmt.Sprintf("%s.train.env[%d].value", base, j), e.Value, i, p, params)
			}
		}
		c.kindRefs(base, t, i, p, params)
	}
}

// kindRefs checks the templates of the fields of map, gate and
// subworkflow tasks.
func (c *checker) kindRefs(base string, t *apiv1.Task, i int, p *Plan, params map[string]bool) {
	if t.ForEach != nil {
		c.refs(base+".forEach.from", t.ForEach.From, i, p, params)
	}
	if t.Gate != nil && t.Gate.Sleep != nil {
		c.refs(base+".gate.sleep.until", t.Gate.Sleep.Until, i, p, params)
	}
	if t.Sensor != nil && t.Sensor.File != nil {
		c.refs(base+".sensor.file.path", t.Sensor.File.Path, i, p, params)
	}
	if t.Workflow != nil {
		for j, v := range t.Workflow.Params {
			c.refs(fmt.Sprintf("%s.workflow.params[%d].value", base, j), v.Value, i, p, params)
		}
	}
}

func (c *checker) refs(field, s string, task int, p *Plan, params map[string]bool) {
	refs, err := template.Refs(s)
	if err != nil {
		c.add(apiv1.CodeTemplate, field, "%v", err)
		return
	}
	for _, r := range refs {
		msg := c.checkRef(r, task, p, params)
		switch {
		case msg == "":
		case c.doc.Kind == apiv1.KindTrainJob:
			// A TrainJob is a run of its own: no params, no other tasks.
			c.addHint(apiv1.CodeTemplate, field, "a TrainJob may use {{outputs.dir}}, {{run.id}}, {{run.name}}, {{task.name}}, {{task.attempt}} and {{task.retries}}",
				"{{%s}}: %s", r.Raw, trainJobRef(r))
		default:
			c.add(apiv1.CodeTemplate, field, "{{%s}}: %s", r.Raw, msg)
		}
	}
}

// trainJobRef says why a TrainJob cannot use r.
func trainJobRef(r template.Ref) string {
	switch r.Path[0] {
	case "params":
		return "a TrainJob takes no parameters"
	case "tasks":
		return "a TrainJob has no other tasks whose outputs it could read"
	}
	return "unknown reference"
}

// checkRef returns why r cannot be resolved for task, or "" if it can.
func (c *checker) checkRef(r template.Ref, task int, p *Plan, params map[string]bool) string {
	switch {
	case r.Path[0] == "item":
		if task < 0 || p.Tasks[task].Spec.ForEach == nil {
			return "{{item}} is the item of a map task; this task has no forEach"
		}
		if len(r.Path) > 2 {
			return "an item is read as {{item}}, {{item.<field>}} or {{item.index}}"
		}
		if len(r.Path) == 2 && r.Path[1] != "index" {
			return itemField(p.Tasks[task].Spec.ForEach, r.Path[1])
		}
		return ""
	case r.Path[0] == "workflow":
		if !c.inExit || (r.Raw != "workflow.status" && r.Raw != "workflow.failures") {
			return "{{workflow.status}} and {{workflow.failures}} are read by onExit tasks only"
		}
		return ""
	case len(r.Path) == 2 && r.Path[0] == "params":
		if !params[r.Path[1]] {
			return fmt.Sprintf("no parameter %q is declared in spec.params", r.Path[1])
		}
		return ""
	case slices.Contains(BuiltinRefs(), r.Raw):
		return ""
	case r.Path[0] == "federation" && (len(r.Path) == 3 || (len(r.Path) == 4 && r.Path[2] == "artifacts")):
		if task >= 0 && c.crossInputs[p.Tasks[task].Spec.Name+"/"+strings.Join(r.Path[1:], ".")] {
			return ""
		}
		return "{{federation.TASK.PARAM}} is how a party's part reads another party's output: write {{tasks.TASK.outputs.parameters.PARAM}}"
	case len(r.Path) == 5 && r.Path[0] == "tasks" && r.Path[2] == "outputs":
		return checkOutputRef(r, task, p)
	case len(r.Path) == 6 && r.Path[0] == "tasks" && r.Path[2] == "outputs" && r.Path[3] == "artifacts" && r.Path[5] == "dir":
		if up, ok := p.Index[r.Path[1]]; ok && p.Tasks[up].Map == nil {
			return fmt.Sprintf("task %q is not a map: only a map's artifacts are gathered into a directory (read {{tasks.%s.outputs.artifacts.%s}})",
				r.Path[1], r.Path[1], r.Path[4])
		}
		return checkOutputRef(template.Ref{Raw: r.Raw, Path: r.Path[:5]}, task, p)
	}
	return "unknown reference; see the hint for what can be referenced"
}

func checkOutputRef(r template.Ref, task int, p *Plan) string {
	up, ok := p.Index[r.Path[1]]
	if !ok {
		return fmt.Sprintf("no task is named %q", r.Path[1])
	}
	if task >= 0 && p.Graph != nil && !p.Graph.IsAncestor(up, task) { // without a graph, the dependency errors say enough
		return fmt.Sprintf("task %q must depend on %q, directly or through other tasks, to read its outputs", p.Tasks[task].Spec.Name, r.Path[1])
	}
	if t := &p.Tasks[up]; t.Kind == apiv1.NodeKindSubworkflow && (t.Sub == nil || t.Sub.Plan == nil) {
		return "" // what it runs is missing or invalid, which its own error says
	}
	outs := p.Tasks[up].Outputs()
	if outs == nil {
		outs = &apiv1.Outputs{}
	}
	name := r.Path[4]
	switch r.Path[3] {
	case "parameters":
		if !slices.ContainsFunc(outs.Parameters, func(o apiv1.OutputParameter) bool { return o.Name == name }) {
			return fmt.Sprintf("task %q declares no output parameter %q", r.Path[1], name)
		}
	case "artifacts":
		if !slices.ContainsFunc(outs.Artifacts, func(a apiv1.Artifact) bool { return a.Name == name }) {
			return fmt.Sprintf("task %q declares no output artifact %q", r.Path[1], name)
		}
	default:
		return "outputs are referenced as outputs.parameters.<name> or outputs.artifacts.<name>"
	}
	return ""
}

// BuiltinRefs returns the references every task can use besides params and
// upstream outputs.
func BuiltinRefs() []string {
	return []string{"outputs.dir", "run.id", "run.name", "task.name", "task.attempt", "task.retries"}
}

// itemField says why the items of f may lack field, or "" when every
// item is known to have it (or the items are known only at run time).
func itemField(f *apiv1.ForEach, field string) string {
	if f.Range != nil {
		return fmt.Sprintf("the items of a range are numbers, which have no field %q: read {{item}} or {{item.index}}", field)
	}
	for k, raw := range f.Items {
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil {
			return fmt.Sprintf("item %d (%s) is not a mapping, so it has no field %q", k, clip(string(raw)), field)
		}
		if _, ok := fields[field]; !ok {
			return fmt.Sprintf("item %d (%s) has no field %q", k, clip(string(raw)), field)
		}
	}
	return ""
}

// clip is s cut to a length an error message can quote.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
