package workflow

import (
	"encoding/json"
	"fmt"
	"strings"

	argov1 "kiln.dev/kiln/api/argo/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// suspend makes task a gate: an approval, or a sleep for the duration.
func (a *argoConv) suspend(task *apiv1.Task, t *argov1.Template, tf string) {
	if name, ok := a.supplied[t.Name]; ok {
		task.Gate = &apiv1.Gate{Signal: a.signal(t, name)}
		a.c.note(tf+".suspend", "the value is sent with kiln signal RUN "+task.Name+" VALUE, not argo resume or argo node set; downstream reads it as the output "+name)
		return
	}
	if d := t.Suspend.Duration; d != "" {
		task.Gate = &apiv1.Gate{Sleep: &apiv1.SleepGate{Duration: argoDuration(d)}}
		return
	}
	task.Gate = &apiv1.Gate{Approve: &apiv1.ApproveGate{Message: "resume " + t.Name + " (argo resume): kiln approve RUN " + task.Name}}
	a.c.note(tf+".suspend", "a suspension is resumed with kiln approve RUN TASK, not argo resume")
}

// argoDuration is an Argo duration as Go reads one: a bare number is seconds.
func argoDuration(d string) string {
	d = strings.TrimSpace(d)
	if d != "" && strings.Trim(d, "0123456789") == "" {
		return d + "s"
	}
	return d
}

// exitHandler translates spec.onExit: the template's tasks run after
// every other, whatever the result.
func (a *argoConv) exitHandler(o *argoOut) {
	exit := a.exitHook("spec.hooks", a.spec.Hooks, a.spec.OnExit)
	if exit == "" {
		return
	}
	t, ti := a.template(exit, "spec.onExit")
	if t == nil {
		return
	}
	a.body(o, t, ti, "spec.onExit")
}

// stepExit runs a call's exit template after it, whatever its result.
func (a *argoConv) stepExit(o *argoOut, list string, c argoCall, name, template string) {
	exit := argov1.Call{Name: name + "-onexit", Template: template}
	a.call(o, list, argoCall{site: &exit, field: c.field + ".onExit"})
	l := a.list(o, list)
	t := &(*l)[len(*l)-1]
	t.Depends = name + " || " + name + ".Failed || " + name + ".Skipped"
}

// exitHook is the template a call's (or the workflow's) exit hook, or
// onExit, names: Argo's hooks.exit is onExit; hooks on other events
// (expressions) have no counterpart.
func (a *argoConv) exitHook(field string, raw json.RawMessage, onExit string) string {
	if len(raw) == 0 {
		return onExit
	}
	var hooks map[string]struct {
		Template   string          `json:"template"`
		Expression string          `json:"expression"`
		Rest       json.RawMessage `json:"templateRef"`
		Arguments  json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(raw, &hooks); err != nil {
		a.c.fail(apiv1.CodeParse, field, "hooks is not a mapping of hooks: "+err.Error(), "")
		return onExit
	}
	for name, h := range hooks {
		switch {
		case name != "exit":
			a.c.fail(apiv1.CodeUnsupported, field+"."+name, "kiln has no life-cycle hooks but the exit handler (hooks.exit)", "run it as a task with a when, or as the exit handler")
		case h.Expression != "" || len(h.Rest) > 0 || len(h.Arguments) > 0 || h.Template == "":
			a.c.fail(apiv1.CodeUnsupported, field+".exit", "kiln reads an exit hook that names a template, without expression, templateRef or arguments", "name the template (template: NAME)")
		case onExit != "":
			a.c.fail(apiv1.CodeUnsupported, field+".exit", "onExit and hooks.exit both name an exit handler", "keep one")
		default:
			onExit = h.Template
		}
	}
	return onExit
}

// readSupplied finds the suspend templates that wait for one supplied
// value, which kiln's signal gate stands for, and which template each
// call runs.
func (a *argoConv) readSupplied() {
	a.supplied, a.calls, a.loops = map[string]string{}, map[string]string{}, map[string]bool{}
	for i := range a.spec.Templates {
		t := &a.spec.Templates[i]
		if t.Suspend != nil && t.Suspend.Duration == "" && t.Outputs != nil && len(t.Outputs.Parameters) == 1 && len(t.Outputs.Artifacts) == 0 {
			if vf := t.Outputs.Parameters[0].ValueFrom; vf != nil && len(vf.Supplied) > 0 {
				a.supplied[t.Name] = t.Outputs.Parameters[0].Name
			}
		}
		if t.DAG != nil {
			for _, task := range t.DAG.Tasks {
				a.readCall(&task.Call)
			}
		}
		for _, group := range t.Steps {
			for _, step := range group {
				a.readCall(&step.Call)
			}
		}
	}
}

func (a *argoConv) readCall(c *argov1.Call) {
	a.calls[kilnName(c.Name)] = c.Template
	if len(c.WithItems) > 0 || c.WithParam != "" || c.WithSequence != nil {
		a.loops[kilnName(c.Name)] = true
	}
}

// gathered refuses a loop over a loop's gathered outputs whose items are
// read by field: Argo parses each output as JSON, kiln gathers them as
// strings.
func (a *argoConv) gathered(c argoCall) {
	m := argoRefRE.FindStringSubmatch(c.site.WithParam)
	if m == nil {
		return
	}
	p := strings.Split(strings.TrimSpace(m[1]), ".")
	if len(p) < 3 || (p[0] != "steps" && p[0] != "tasks") || !a.loops[kilnName(p[1])] {
		return
	}
	js, _ := json.Marshal(c.site)
	if strings.Contains(string(js), "{{item.") {
		a.c.fail(apiv1.CodeUnsupported, c.field+".withParam",
			fmt.Sprintf("%s is a loop's outputs, which kiln gathers as a list of strings: its items have no fields to read (Argo parses each output as JSON)", strings.Join(p[:2], ".")),
			"have one task print the whole JSON list, and loop over that task's result")
	}
}

// signal is the signal gate of suspend template t, waiting for its
// supplied output name: its input of that name describes it.
func (a *argoConv) signal(t *argov1.Template, name string) *apiv1.SignalGate {
	g := &apiv1.SignalGate{Type: "string", Message: "supply " + name}
	if vf := t.Outputs.Parameters[0].ValueFrom; len(vf.Default) > 0 {
		d := rawText(vf.Default)
		g.Default = &d
	}
	if t.Inputs != nil {
		for _, p := range t.Inputs.Parameters {
			if p.Name != name {
				continue
			}
			if p.Description != "" {
				g.Message = p.Description
			}
			if g.Default == nil {
				g.Default = a.paramValue("", p)
			}
		}
	}
	return g
}

// outputName is kiln's name of output parameter p of the call named
// call: a signal gate's is value.
func (a *argoConv) outputName(call, p string) string {
	if a.supplied[a.calls[kilnName(call)]] == p {
		return "value"
	}
	return p
}

// gateTimeout bounds a suspension's wait by its template's deadline: the
// gate fails when it passes, as the suspended node does in Argo.
func (a *argoConv) gateTimeout(o *argoOut, g *apiv1.Gate, t *argov1.Template, tf string) {
	sc := a.bodyScope(o, tf)
	switch {
	case t.ActiveDeadlineSeconds != nil:
		g.Timeout = a.seconds(sc.at(tf+".activeDeadlineSeconds"), t.ActiveDeadlineSeconds)
	case t.Timeout != "":
		g.Timeout = argoDuration(t.Timeout)
	}
}
