package workflow

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	argov1 "kiln.dev/kiln/api/argo/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// argoPod is what Argo sets of a pod beside its container: node
// selection, tolerations, labels and annotations.
type argoPod struct {
	nodeSelector map[string]string
	tolerations  []corev1.Toleration
	meta         apiv1.PodMetadata
}

// readArgoPod reads the pod settings written at field (spec, or
// spec.templates[i]); metaField names the pod metadata's field there. In
// a template inlined into a call (sc; nil for the workflow's) its inputs
// are substituted; a reference known only as the run goes is refused:
// kiln sets a pod's fields when it reads the workflow.
func (a *argoConv) readArgoPod(sc *argoScope, field, metaField string, nodeSelector map[string]string, tolerations []corev1.Toleration, meta json.RawMessage) argoPod {
	p := argoPod{nodeSelector: a.podMap(sc, field+".nodeSelector", nodeSelector)}
	if len(nodeSelector) > 0 {
		a.c.podField(field + ".nodeSelector")
	}
	for i, t := range tolerations {
		f := fmt.Sprintf("%s.tolerations[%d]", field, i)
		t.Key = a.podText(sc, f+".key", t.Key)
		t.Value = a.podText(sc, f+".value", t.Value)
		t.Operator = corev1.TolerationOperator(a.podText(sc, f+".operator", string(t.Operator)))
		t.Effect = corev1.TaintEffect(a.podText(sc, f+".effect", string(t.Effect)))
		p.tolerations = append(p.tolerations, t)
	}
	if len(tolerations) > 0 {
		a.c.podField(field + ".tolerations")
	}
	if len(meta) > 0 {
		if err := json.Unmarshal(meta, &p.meta); err != nil {
			a.c.fail(apiv1.CodeParse, field+"."+metaField, "is not pod metadata (labels, annotations): "+err.Error(), "")
		}
		p.meta.Labels = a.podMap(sc, field+"."+metaField+".labels", p.meta.Labels)
		p.meta.Annotations = a.podMap(sc, field+"."+metaField+".annotations", p.meta.Annotations)
		a.c.podField(field + "." + metaField)
	}
	return p
}

// podMap is m, a mapping of a pod's (node selector, labels), each key's
// and value's references substituted (podText).
func (a *argoConv) podMap(sc *argoScope, field string, m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		f := field + "[" + k + "]"
		out[a.podText(sc, f, k)] = a.podText(sc, f, m[k])
	}
	return out
}

// podText is text, a pod's field, with the inputs of the template inlined
// in sc substituted; a reference left is refused, naming field.
func (a *argoConv) podText(sc *argoScope, field, text string) string {
	if !strings.Contains(text, "{{") {
		return text
	}
	out, n := text, len(a.c.errs)
	if sc != nil {
		out = sc.at(field).rewrite(text)
	}
	if len(a.c.errs) == n && strings.Contains(out, "{{") {
		a.c.fail(apiv1.CodeUnsupported, field,
			fmt.Sprintf("%q takes its value as the run starts or goes (a workflow parameter, a loop's item, a task's output), but kiln sets a pod's nodeSelector, tolerations and metadata when it reads the workflow", text),
			"write the value, or pass it as written in the arguments of the call ({{inputs.parameters.X}} then reads it)")
	}
	return out
}

func (p argoPod) empty() bool {
	return len(p.nodeSelector)+len(p.tolerations)+len(p.meta.Labels)+len(p.meta.Annotations) == 0
}

// merged is p with q's settings added (q's win).
func (p argoPod) merged(q argoPod) argoPod {
	out := argoPod{nodeSelector: map[string]string{}, meta: apiv1.PodMetadata{Labels: map[string]string{}, Annotations: map[string]string{}}}
	for _, x := range []argoPod{p, q} {
		maps.Copy(out.nodeSelector, x.nodeSelector)
		maps.Copy(out.meta.Labels, x.meta.Labels)
		maps.Copy(out.meta.Annotations, x.meta.Annotations)
		out.tolerations = append(out.tolerations, x.tolerations...)
	}
	return out
}

// into adds p's settings to pt (nil: a new template), returning it; pt
// unchanged when p sets nothing.
func (p argoPod) into(pt *apiv1.PodTemplate) *apiv1.PodTemplate {
	if p.empty() {
		return pt
	}
	if pt == nil {
		pt = &apiv1.PodTemplate{}
	}
	if pt.Spec == nil {
		pt.Spec = &corev1.PodSpec{}
	}
	if len(p.nodeSelector) > 0 {
		pt.Spec.NodeSelector = p.nodeSelector
	}
	pt.Spec.Tolerations = append(pt.Spec.Tolerations, p.tolerations...)
	if len(p.meta.Labels) > 0 {
		pt.Metadata.Labels = p.meta.Labels
	}
	if len(p.meta.Annotations) > 0 {
		pt.Metadata.Annotations = p.meta.Annotations
	}
	return pt
}

// templateDefaults merges spec.templateDefaults into every template, as
// Argo does: what a template writes itself wins.
func (a *argoConv) templateDefaults() {
	if len(a.spec.TemplateDefaults) == 0 {
		return
	}
	var defaults map[string]any
	if err := json.Unmarshal(a.spec.TemplateDefaults, &defaults); err != nil {
		a.c.fail(apiv1.CodeParse, "spec.templateDefaults", "is not a template: "+err.Error(), "")
		return
	}
	for i := range a.spec.Templates {
		js, err := json.Marshal(a.spec.Templates[i])
		var own map[string]any
		if err == nil {
			err = json.Unmarshal(js, &own)
		}
		if err == nil {
			js, err = json.Marshal(mergeJSON(ownKinds(defaults, own), own))
		}
		merged := argov1.Template{}
		if err == nil {
			err = json.Unmarshal(js, &merged)
		}
		if err != nil {
			a.c.fail(apiv1.CodeParse, "spec.templateDefaults", "cannot be merged into template "+a.spec.Templates[i].Name+": "+err.Error(), "")
			return
		}
		a.spec.Templates[i] = merged
	}
}

// ownKinds is a template's defaults less the kinds of template (a
// container's, a script's) that the template is not.
func ownKinds(defaults, own map[string]any) map[string]any {
	out := maps.Clone(defaults)
	for _, k := range []string{"container", "script", "dag", "steps", "suspend", "resource", "http", "data", "containerSet", "plugin"} {
		if _, ok := own[k]; !ok {
			delete(out, k)
		}
	}
	return out
}

// mergeJSON is base with over's values on top, mappings merged key by key.
func mergeJSON(base, over map[string]any) map[string]any {
	out := maps.Clone(base)
	for k, v := range over {
		bm, bok := out[k].(map[string]any)
		om, ook := v.(map[string]any)
		if bok && ook {
			out[k] = mergeJSON(bm, om)
			continue
		}
		out[k] = v
	}
	return out
}
