package workflow

import (
	"fmt"
	"regexp"
	"strings"

	argov1 "kiln.dev/kiln/api/argo/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// argoScope is where a text with Argo's {{...}} references is read: a
// DAG's or steps' body (inputs are the workflow's params), or a template
// inlined into a call (inputs are the call's arguments).
type argoScope struct {
	a *argoConv
	o *argoOut
	// field is the text's field as written, for errors.
	field string
	// inputs are the callee's input parameters, as kiln text; nil in a body.
	inputs map[string]string
	// artifacts are the callee's input artifacts' paths; outputs its
	// outputs' (parameters.NAME, artifacts.NAME).
	artifacts, outputs map[string]string
}

func (a *argoConv) bodyScope(o *argoOut, field string) *argoScope {
	return &argoScope{a: a, o: o, field: field}
}

// calleeScope reads template t inlined into a call with args.
func (a *argoConv) calleeScope(o *argoOut, tf string, t *argov1.Template, args argoArgs) *argoScope {
	sc := &argoScope{a: a, o: o, field: tf, inputs: map[string]string{}, artifacts: map[string]string{}, outputs: map[string]string{}}
	if t.Outputs != nil {
		for _, p := range t.Outputs.Parameters {
			if p.ValueFrom != nil && p.ValueFrom.Path != "" {
				sc.outputs["parameters."+p.Name] = p.ValueFrom.Path
			}
		}
		for _, art := range t.Outputs.Artifacts {
			sc.outputs["artifacts."+art.Name] = art.Path
		}
	}
	if t.Inputs == nil {
		return sc
	}
	for i, p := range t.Inputs.Parameters {
		f := fmt.Sprintf("%s.inputs.parameters[%d]", tf, i)
		if v, ok := args.values[p.Name]; ok {
			sc.inputs[p.Name] = v
			continue
		}
		if p.ValueFrom != nil {
			a.c.fail(apiv1.CodeUnsupported, f+".valueFrom", "kiln reads an input's value from the call's arguments or its default", "write a default")
			continue
		}
		d := a.paramValue("", p)
		if d == nil {
			a.c.fail(apiv1.CodeRequired, f, fmt.Sprintf("input %q of template %q has no value: the call gives none and it has no default", p.Name, t.Name),
				"pass it in the call's arguments, or give it a default")
			continue
		}
		sc.inputs[p.Name] = a.bodyScope(o, f+".default").rewrite(*d)
	}
	for _, art := range t.Inputs.Artifacts {
		sc.artifacts[art.Name] = art.Path
	}
	return sc
}

func (s *argoScope) at(field string) *argoScope { c := *s; c.field = field; return &c }

func (s *argoScope) fail(msg, hint string) {
	s.a.c.fail(apiv1.CodeUnsupported, s.field, msg, hint)
}

var argoRefRE = regexp.MustCompile(`\{\{(.*?)\}\}`)

// rewrite turns Argo's references in text into kiln's.
func (s *argoScope) rewrite(text string) string {
	return argoRefRE.ReplaceAllStringFunc(text, func(m string) string {
		inner := strings.TrimSpace(m[2 : len(m)-2])
		if strings.HasPrefix(inner, "=") {
			s.fail("kiln does not evaluate Argo's expression tags ({{= ...}}) here", "write the value, or a plain {{...}} reference")
			return m
		}
		out, ok := s.ref(inner)
		if !ok {
			return m
		}
		return out
	})
}

func (s *argoScope) rewriteAll(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, t := range in {
		out[i] = s.at(fmt.Sprintf("%s[%d]", s.field, i)).rewrite(t)
	}
	return out
}

// ref is kiln's template for Argo's reference inner.
func (s *argoScope) ref(inner string) (string, bool) {
	p := strings.Split(inner, ".")
	switch {
	case len(p) == 3 && p[0] == "inputs" && p[1] == "parameters":
		if s.inputs == nil {
			return "{{params." + p[2] + "}}", true
		}
		if v, ok := s.inputs[p[2]]; ok {
			return v, true
		}
	case len(p) == 4 && p[0] == "inputs" && p[1] == "artifacts" && p[3] == "path":
		if v, ok := s.artifacts[p[2]]; ok {
			return v, true
		}
	case len(p) == 3 && p[0] == "workflow" && p[1] == "parameters":
		return "{{params." + s.global(p[2]) + "}}", true
	case inner == "item" || (len(p) > 1 && p[0] == "item"):
		return "{{" + inner + "}}", true
	case len(p) >= 3 && (p[0] == "steps" || p[0] == "tasks"):
		if out := nodeOutput(p); out != "" {
			if len(p) == 5 && p[3] == "parameters" {
				out = "outputs.parameters." + s.a.outputName(p[1], p[4])
			}
			return "{{tasks." + kilnName(p[1]) + "." + out + "}}", true
		}
	case len(p) == 4 && p[0] == "outputs" && p[3] == "path":
		if v, ok := s.outputs[p[1]+"."+p[2]]; ok {
			return v, true
		}
	}
	if v, ok := argoBuiltins[inner]; ok {
		return v, true
	}
	s.fail(fmt.Sprintf("kiln has no counterpart for {{%s}}", inner), argoRefsHint)
	return "", false
}

// argoRefsHint lists the references kiln reads.
const argoRefsHint = "kiln reads {{inputs.parameters.X}}, {{inputs.artifacts.X.path}}, {{workflow.parameters.X}}, {{workflow.name}}, {{workflow.uid}}, " +
	"{{workflow.status}} and {{workflow.failures}} (onExit), {{item}}, {{retries}}, {{pod.name}}, and a step's or task's outputs.parameters.X, " +
	"outputs.artifacts.X, outputs.result and exitCode"

// argoBuiltins are Argo's run-wide references and kiln's for them.
var argoBuiltins = map[string]string{
	"workflow.name":     "{{run.name}}",
	"workflow.uid":      "{{run.id}}",
	"workflow.status":   "{{workflow.status}}",
	"workflow.failures": "{{workflow.failures}}",
	"pod.name":          "{{task.name}}",
	"node.name":         "{{task.name}}",
	"retries":           "{{task.retries}}",
}

// nodeOutput is kiln's path (after tasks.NAME.) of a step's or task's
// output p (steps.NAME....); "" when kiln has none.
func nodeOutput(p []string) string {
	switch {
	case len(p) == 4 && p[2] == "outputs" && p[3] == "result":
		return "outputs.parameters.result"
	case len(p) == 3 && p[2] == "exitCode", len(p) == 4 && p[2] == "outputs" && p[3] == "exitCode":
		return "outputs.parameters.exitCode"
	case len(p) == 5 && p[2] == "outputs" && (p[3] == "parameters" || p[3] == "artifacts"):
		return strings.Join(p[2:], ".")
	}
	return ""
}

// global is the param that holds workflow parameter name in s's workflow.
func (s *argoScope) global(name string) string {
	if !s.o.sub {
		return name
	}
	s.o.use(name)
	return workflowParam(name)
}

var (
	argoResultRE   = regexp.MustCompile(`(?:steps|tasks)\.([A-Za-z0-9_-]+)\.outputs\.result`)
	argoExitCodeRE = regexp.MustCompile(`(?:steps|tasks)\.([A-Za-z0-9_-]+)\.(?:outputs\.)?exitCode`)
)

// readOutputs finds the calls whose result or exit code the document
// reads anywhere, by name.
func readOutputs(js []byte) (results, exitCodes map[string]bool) {
	find := func(re *regexp.Regexp) map[string]bool {
		out := map[string]bool{}
		for _, m := range re.FindAllSubmatch(js, -1) {
			out[kilnName(string(m[1]))] = true
		}
		return out
	}
	return find(argoResultRE), find(argoExitCodeRE)
}
