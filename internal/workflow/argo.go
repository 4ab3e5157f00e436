package workflow

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	argov1 "kiln.dev/kiln/api/argo/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// argoGroup reads Argo Workflows' documents. A Workflow becomes a kiln
// Workflow: its entrypoint's DAG or steps are the tasks, each call of a
// container, script or suspend template one task (the template inlined),
// each call of a DAG or steps template a subworkflow, generated beside it
// as a Workflow of its own. docs/argo.md lists every field.
func argoGroup() translator {
	return translator{apiVersion: argov1.APIVersion, kinds: map[string]translateFunc{
		argov1.KindWorkflow:                argoWorkflow,
		argov1.KindWorkflowTemplate:        argoWorkflowTemplate,
		argov1.KindClusterWorkflowTemplate: argoWorkflowTemplate,
	}}
}

// argoConv is one Argo document being translated.
type argoConv struct {
	c    *conversion
	name string
	spec *argov1.WorkflowSpec
	// index finds a template by name.
	index map[string]int
	// globals are the workflow's parameters (spec.arguments).
	globals []string
	// results names the calls whose result or exit code some reference
	// reads: their commands are wrapped to keep it.
	results, exitCodes map[string]bool
	// subs are the generated workflows, by template name, in the order
	// made; active are the templates being made (a cycle is recursion).
	subs   map[string]*argoOut
	order  []string
	active map[string]bool
	// supplied maps a suspend template that waits for one supplied value
	// to that output's name; calls maps each call's kiln name to the
	// template it calls.
	supplied, calls map[string]string
	// loops are the calls that loop, by kiln name.
	loops map[string]bool
	// pod is what the workflow sets of every pod.
	pod argoPod
	// ignoredGiven: the first document made carries the ignored fields.
	ignoredGiven bool
	// kind is the kiln kind of the documents made: Workflow, or
	// WorkflowTemplate for a stored Argo WorkflowTemplate.
	kind string
}

// argoOut is one kiln workflow being made, and where its fields are written.
type argoOut struct {
	name string
	wf   *apiv1.Workflow
	// sub: a generated subworkflow, whose workflow parameters come in as
	// params named workflowParam(X), and its inputs as params.
	sub bool
	// uses are the workflow parameters it reads, itself or through the
	// workflows it runs.
	uses []string
	// fields maps a field of the translation (a prefix) to the field as
	// written.
	fields []fieldMap
}

type fieldMap struct{ kiln, argo string }

// workflowParam is the param of a generated subworkflow that carries the
// workflow parameter name.
func workflowParam(name string) string { return "workflow-parameters-" + name }

func (o *argoOut) mapField(kiln, argo string) { o.fields = append(o.fields, fieldMap{kiln, argo}) }

func (o *argoOut) use(global string) {
	if !slices.Contains(o.uses, global) {
		o.uses = append(o.uses, global)
	}
}

// field renames f, a field of the translation, to the field as written:
// the longest prefix mapped wins.
func (o *argoOut) field(f string) string {
	best := -1
	for i, m := range o.fields {
		if hasFieldPrefix(f, m.kiln) && (best < 0 || len(m.kiln) > len(o.fields[best].kiln)) {
			best = i
		}
	}
	if best < 0 {
		return f
	}
	return o.fields[best].argo + f[len(o.fields[best].kiln):]
}

func hasFieldPrefix(f, p string) bool {
	if !strings.HasPrefix(f, p) {
		return false
	}
	rest := f[len(p):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}

// argoWorkflow translates an Argo Workflow.
func argoWorkflow(doc *Document) ([]Document, error) {
	in := &argov1.Workflow{}
	problems, ok := decodeStrict(doc, in)
	if !ok {
		return nil, argoNamed(doc, joinErrs(problems))
	}
	a := newArgoConv(doc, problems, &in.Metadata, &in.Spec, apiv1.KindWorkflow)
	out, err := a.translate(doc, &in.Metadata)
	return out, argoNamed(doc, err)
}

// argoNamed names doc in err's problems as its translation is named
// (Workflow/NAME), where doc has a generateName and no name: Object()
// would call it "document N". Each is located first, in the document as
// written, as Translate would by the name it had.
func argoNamed(doc *Document, err error) error {
	if doc.Name != "" || err == nil {
		return err
	}
	var head struct {
		Metadata struct {
			GenerateName string `json:"generateName"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(doc.JSON, &head) // the decoder named what is not
	name := strings.TrimRight(head.Metadata.GenerateName, "-.")
	if name == "" {
		return err
	}
	for _, e := range apiv1.Errors(err) {
		if e.File == doc.File && e.Object == doc.Object() {
			doc.locate(e)
			e.Object = doc.Kind + "/" + name
		}
	}
	return err
}

// argoWorkflowTemplate translates an Argo WorkflowTemplate (or a
// ClusterWorkflowTemplate) into stored kiln WorkflowTemplates: one that
// runs its entrypoint, named as it is, and one per template that a
// templateRef may call, named <name>-<template>.
func argoWorkflowTemplate(doc *Document) ([]Document, error) {
	in := &argov1.WorkflowTemplate{}
	problems, ok := decodeStrict(doc, in)
	if !ok {
		return nil, argoNamed(doc, joinErrs(problems))
	}
	a := newArgoConv(doc, problems, &in.Metadata, &in.Spec, apiv1.KindWorkflowTemplate)
	if doc.Kind == argov1.KindClusterWorkflowTemplate {
		a.c.note("kind", "kiln stores the templates in the project they are applied to; runs of other projects do not see them")
	}
	out, err := a.translate(doc, &in.Metadata)
	return out, argoNamed(doc, err)
}

func newArgoConv(doc *Document, problems []error, meta *argov1.ObjectMeta, spec *argov1.WorkflowSpec, kind string) *argoConv {
	a := &argoConv{
		c: &conversion{doc: doc, errs: problems}, spec: spec, index: map[string]int{},
		subs: map[string]*argoOut{}, active: map[string]bool{}, kind: kind,
	}
	a.name = meta.Name
	if a.name == "" && meta.GenerateName != "" {
		a.name = strings.TrimRight(meta.GenerateName, "-.")
		a.c.note("metadata.generateName", "kiln names each run itself; the workflow is named "+quote(a.name))
	}
	if a.name == "" {
		a.c.fail(apiv1.CodeRequired, "metadata.name", "the workflow has no name", "set metadata.name (or generateName)")
	}
	a.templateDefaults()
	for i, t := range spec.Templates {
		if _, dup := a.index[t.Name]; dup {
			a.c.fail(apiv1.CodeDuplicate, fmt.Sprintf("spec.templates[%d].name", i), fmt.Sprintf("template %q is written twice", t.Name), "")
			continue
		}
		a.index[t.Name] = i
	}
	if spec.Arguments != nil {
		for _, p := range spec.Arguments.Parameters {
			a.globals = append(a.globals, p.Name)
		}
	}
	a.results, a.exitCodes = readOutputs(doc.JSON)
	a.readSupplied()
	a.pod = a.readArgoPod(nil, "spec", "podMetadata", spec.NodeSelector, spec.Tolerations, spec.PodMetadata)
	return a
}

// translate makes the documents: the root workflow (a kiln template
// for a stored Argo template), then every generated one.
func (a *argoConv) translate(doc *Document, meta *argov1.ObjectMeta) ([]Document, error) {
	a.specFields()
	var roots []*argoOut
	switch {
	case a.spec.WorkflowTemplateRef != nil:
		roots = append(roots, a.templateRefRoot())
	case a.kind == apiv1.KindWorkflowTemplate:
		roots = append(roots, a.storedRoots()...)
	case a.spec.Entrypoint == "":
		a.c.fail(apiv1.CodeRequired, "spec.entrypoint", "the workflow names no entrypoint", "set spec.entrypoint to the template to run first")
	default:
		roots = append(roots, a.root(a.name, a.spec.Entrypoint))
	}
	if len(a.c.errs) > 0 {
		return nil, joinErrs(uniqueErrs(a.c.errs))
	}
	var out []Document
	for _, o := range append(roots, a.generated()...) {
		d, err := a.document(doc, meta, o)
		if err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, nil
}

// generated lists the generated subworkflows in the order they were made.
func (a *argoConv) generated() []*argoOut {
	out := make([]*argoOut, 0, len(a.order))
	for _, name := range a.order {
		out = append(out, a.subs[name])
	}
	return out
}

// document writes o out as a translated document.
func (a *argoConv) document(doc *Document, meta *argov1.ObjectMeta, o *argoOut) (*Document, error) {
	kind := apiv1.KindWorkflow
	if a.kind == apiv1.KindWorkflowTemplate {
		kind = apiv1.KindWorkflowTemplate
		o.wf.Kind = kind
	}
	var obj any = o.wf
	if kind == apiv1.KindWorkflowTemplate {
		obj = &apiv1.WorkflowTemplate{TypeMeta: o.wf.TypeMeta, Metadata: o.wf.Metadata, Spec: o.wf.Spec}
	}
	from := &Origin{Namespace: meta.Namespace, Field: o.field}
	if !a.ignoredGiven {
		// The document's ignored fields are named once, with the first
		// document made of it.
		from.Ignored, a.ignoredGiven = uniqueIgnored(a.c.ignored), true
	}
	d, err := translated(doc, kind, obj, from)
	if d != nil {
		d.Name = o.name
	}
	return d, err
}

// newOut starts a kiln workflow named name.
func (a *argoConv) newOut(name string, sub bool) *argoOut {
	return &argoOut{name: name, sub: sub, wf: &apiv1.Workflow{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: apiv1.KindWorkflow},
		Metadata: apiv1.ObjectMeta{Name: name},
		Spec:     apiv1.WorkflowSpec{PodTemplate: a.pod.into(nil)},
	}}
}

// template finds the template named name, called from field; nil, with
// the problem recorded, when there is none.
func (a *argoConv) template(name, field string) (*argov1.Template, int) {
	i, ok := a.index[name]
	if !ok {
		a.c.fail(apiv1.CodeArgoTemplate, field, fmt.Sprintf("no template is named %q", name), "name one of spec.templates")
		return nil, -1
	}
	return &a.spec.Templates[i], i
}

// root makes the workflow that runs template entry.
func (a *argoConv) root(name, entry string) *argoOut {
	o := a.newOut(name, false)
	t, i := a.template(entry, "spec.entrypoint")
	if t == nil {
		return o
	}
	params, fields := a.rootParams(t, i)
	o.wf.Spec.Params = params
	for k, f := range fields {
		o.mapField(fmt.Sprintf("spec.params[%d]", k), f)
	}
	if args := a.spec.Arguments; args != nil && len(args.Artifacts) > 0 && (t.DAG != nil || len(t.Steps) > 0) {
		a.c.fail(apiv1.CodeUnsupported, "spec.arguments.artifacts", "kiln passes artifacts to the tasks that run programs, not to a DAG or steps entrypoint",
			"pass the artifact to the tasks that read it")
	}
	a.body(o, t, i, "spec.tasks")
	if t.DAG != nil || len(t.Steps) > 0 {
		// A DAG or steps entrypoint's outputs are the run's; what else it
		// sets is read as a nested template's is.
		a.subOutputs(o, t, i)
		a.groupSettings(t, fmt.Sprintf("spec.templates[%d]", i))
	}
	a.exitHandler(o)
	a.workflowLimits(o)
	return o
}

// rootParams are the workflow's parameters and the entrypoint's inputs,
// with their values as defaults.
func (a *argoConv) rootParams(entry *argov1.Template, ti int) (out []apiv1.Param, fields []string) {
	seen := map[string]bool{}
	if a.spec.Arguments != nil {
		for i, p := range a.spec.Arguments.Parameters {
			f := fmt.Sprintf("spec.arguments.parameters[%d]", i)
			out = append(out, apiv1.Param{Name: p.Name, Default: a.paramValue(f, p), Description: p.Description})
			fields = append(fields, f)
			seen[p.Name] = true
		}
	}
	if entry.Inputs != nil {
		for j, p := range entry.Inputs.Parameters {
			if !seen[p.Name] {
				f := fmt.Sprintf("spec.templates[%d].inputs.parameters[%d]", ti, j)
				out = append(out, apiv1.Param{Name: p.Name, Default: a.paramValue(f, p), Description: p.Description})
				fields = append(fields, f)
			}
		}
	}
	return out, fields
}

// paramValue is a parameter's value (or default) as text; nil for none.
func (a *argoConv) paramValue(field string, p argov1.Parameter) *string {
	if p.ValueFrom != nil && field != "" {
		a.c.fail(apiv1.CodeUnsupported, field+".valueFrom", "kiln reads a parameter's value as written, not from a config map or elsewhere",
			"write the value")
	}
	raw := p.Value
	if len(raw) == 0 {
		raw = p.Default
	}
	if len(raw) == 0 {
		return nil
	}
	s := rawText(raw)
	return &s
}

// specFields names the workflow-wide fields kiln does not honour.
func (a *argoConv) specFields() {
	s := a.spec
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"serviceAccountName", len(s.ServiceAccountName) > 0},
		{"automountServiceAccountToken", len(s.AutomountServiceAccountToken) > 0},
		{"executor", len(s.Executor) > 0},
		{"artifactRepositoryRef", len(s.ArtifactRepositoryRef) > 0},
		{"imagePullSecrets", len(s.ImagePullSecrets) > 0},
		{"hostNetwork", len(s.HostNetwork) > 0},
		{"dnsPolicy", len(s.DNSPolicy) > 0},
		{"dnsConfig", len(s.DNSConfig) > 0},
		{"priority", len(s.Priority) > 0},
		{"schedulerName", len(s.SchedulerName) > 0},
		{"podGC", len(s.PodGC) > 0},
		{"podPriorityClassName", len(s.PodPriorityClassName) > 0},
		{"hostAliases", len(s.HostAliases) > 0},
		{"securityContext", len(s.SecurityContext) > 0},
		{"podSpecPatch", len(s.PodSpecPatch) > 0},
		{"podDisruptionBudget", len(s.PodDisruptionBudget) > 0},
		{"metrics", len(s.Metrics) > 0},
		{"volumeClaimGC", len(s.VolumeClaimGC) > 0},
		{"archiveLogs", len(s.ArchiveLogs) > 0},
		{"workflowMetadata", len(s.WorkflowMetadata) > 0},
		{"artifactGC", len(s.ArtifactGC) > 0},
		{"executorPlugins", len(s.ExecutorPlugins) > 0},
		{"podResources", len(s.PodResources) > 0},
		{"affinity", len(s.Affinity) > 0},
		{"volumes", len(s.Volumes) > 0},
	} {
		if f.set {
			a.c.ignore("spec."+f.name, "kiln makes its pods and runs its processes itself, and does not carry this Argo setting over")
		}
	}
	for _, f := range []struct {
		name, hint string
		set        bool
	}{
		{"volumeClaimTemplates", "pass files between tasks as artifacts", len(s.VolumeClaimTemplates) > 0},
		{"suspend", "drop it, and add a suspend template where the workflow should wait", len(s.Suspend) > 0},
		{"shutdown", "drop it; stop a run with kiln stop", len(s.Shutdown) > 0},
		{"synchronization", "drop it; kiln's pool and project quotas bound what runs at once", len(s.Synchronization) > 0},
		{"resourceClaims", "drop it", len(s.ResourceClaims) > 0},
	} {
		if f.set {
			a.c.fail(apiv1.CodeUnsupported, "spec."+f.name, "kiln has no counterpart for "+f.name+": the workflow would not run as written", f.hint)
		}
	}
}

// workflowLimits translates the workflow's deadline, parallelism and time to live.
func (a *argoConv) workflowLimits(o *argoOut) {
	s := a.spec
	if s.ActiveDeadlineSeconds != nil {
		o.wf.Spec.Timeout = fmt.Sprintf("%ds", *s.ActiveDeadlineSeconds)
		o.mapField("spec.timeout", "spec.activeDeadlineSeconds")
	}
	if s.Parallelism != nil {
		a.c.ignore("spec.parallelism", "kiln bounds what runs at once by its pool; a template's parallelism is kept as its loops' maxParallel")
	}
	if t := s.TTLStrategy; t != nil {
		switch {
		case t.SecondsAfterCompletion != nil:
			o.wf.Spec.TTLSecondsAfterFinished = t.SecondsAfterCompletion
			o.mapField("spec.ttlSecondsAfterFinished", "spec.ttlStrategy.secondsAfterCompletion")
		case t.SecondsAfterSuccess != nil || t.SecondsAfterFailure != nil:
			a.c.ignore("spec.ttlStrategy", "kiln deletes finished runs after one time, whatever their result: set secondsAfterCompletion")
		}
	}
}

// uniqueErrs is errs without repeats: a stored WorkflowTemplate's
// entrypoint is translated twice, as its root and as a template of its own.
func uniqueErrs(errs []error) []error {
	var out []error
	seen := map[string]bool{}
	for _, e := range errs {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	return out
}

// uniqueIgnored is list without repeats: a template called often is
// named once.
func uniqueIgnored(list []Ignored) []Ignored {
	var out []Ignored
	for _, i := range list {
		if !slices.ContainsFunc(out, func(o Ignored) bool { return o.Field == i.Field && o.Reason == i.Reason }) {
			out = append(out, i)
		}
	}
	return out
}
