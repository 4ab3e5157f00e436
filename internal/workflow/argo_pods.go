package workflow

import (
	"encoding/json"
	"maps"

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
// spec.templates[i]); metaField names the pod metadata's field there.
func (a *argoConv) readArgoPod(field, metaField string, nodeSelector map[string]string, tolerations []corev1.Toleration, meta json.RawMessage) argoPod {
	p := argoPod{nodeSelector: nodeSelector, tolerations: tolerations}
	if len(nodeSelector) > 0 {
		a.c.podField(field + ".nodeSelector")
	}
	if len(tolerations) > 0 {
		a.c.podField(field + ".tolerations")
	}
	if len(meta) > 0 {
		if err := json.Unmarshal(meta, &p.meta); err != nil {
			a.c.fail(apiv1.CodeParse, field+"."+metaField, "is not pod metadata (labels, annotations): "+err.Error(), "")
		}
		a.c.podField(field + "." + metaField)
	}
	return p
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
