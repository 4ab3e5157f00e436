package workflow

import (
	"encoding/json"
	"errors"
	"maps"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/training"
)

// DecodeSchedule decodes doc as a Schedule, as strictly as DecodeWorkflow
// decodes a Workflow. Its status, which kiln sets, is dropped.
func DecodeSchedule(doc *Document) (*apiv1.Schedule, error) {
	if err := checkHeader(doc, apiv1.KindSchedule); err != nil {
		return nil, err
	}
	s := &apiv1.Schedule{}
	problems, ok := decodeStrict(doc, s)
	s.Status = nil
	return decoded(s, problems, ok)
}

// DecodeProjectQuota decodes doc as a ProjectQuota, whatever its header
// says (its caller checks that): every field the schema lacks is
// CodeUnknownField at its path, with the names near it, and a value of
// the wrong type is named at its field, as in every other kind.
func DecodeProjectQuota(doc *Document) (*apiv1.ProjectQuota, error) {
	q := &apiv1.ProjectQuota{}
	problems, ok := decodeStrict(doc, q)
	return decoded(q, problems, ok)
}

// ScheduleWorkflow is the Workflow a schedule's tick runs: spec, named
// after the schedule, with the schedule's labels and those that tie the
// run to the schedule and the tick.
func ScheduleWorkflow(s *apiv1.Schedule, spec apiv1.WorkflowSpec, tick time.Time) *apiv1.Workflow {
	labels := maps.Clone(s.Metadata.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[apiv1.LabelSchedule] = s.Metadata.Name
	labels[apiv1.LabelScheduledTime] = strconv.FormatInt(tick.Unix(), 10)
	return &apiv1.Workflow{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: apiv1.KindWorkflow},
		Metadata: apiv1.ObjectMeta{Name: s.Metadata.Name, Labels: labels},
		Spec:     spec,
	}
}

// ScheduleSource is the Workflow a schedule's tick runs as a file of a
// submission, named after the schedule, so that the run goes the way of
// every other run and its errors name the schedule.
func ScheduleSource(s *apiv1.Schedule, spec apiv1.WorkflowSpec, tick time.Time) apiv1.SourceFile {
	data, _ := json.Marshal(ScheduleWorkflow(s, spec, tick)) // plain API structs always marshal
	return apiv1.SourceFile{Name: "Schedule/" + s.Metadata.Name, Data: data}
}

// CheckScheduleWorkflow compiles a schedule's inline workflow
// (spec.workflow) as the Workflow each tick runs. Subworkflows are found
// in stored, train tasks' runtimes in runtimes. Errors name doc, the
// schedule's document, and fields under spec.workflow.
func CheckScheduleWorkflow(doc *Document, s *apiv1.Schedule, stored Stored, runtimes StoredRuntimes) error {
	wf := ScheduleWorkflow(s, *s.Spec.Workflow, time.Time{})
	found := newLookup(stored)
	resolver := training.NewRuntimes().WithStored(runtimes)
	_, err := compileWith(doc, wf, resolver, Library{}, found)
	if serr := errors.Join(found.storeError(), resolver.Err()); serr != nil {
		return serr
	}
	for _, e := range apiv1.Errors(err) {
		if e.File == doc.File && e.Object == doc.Object() {
			e.Field = underWorkflow(e.Field)
		}
	}
	return err
}

// underWorkflow moves a Workflow's field path under a Schedule's
// spec.workflow.
func underWorkflow(field string) string {
	if rest, ok := strings.CutPrefix(field, "spec."); ok {
		return "spec.workflow." + rest
	}
	if field == "spec" {
		return "spec.workflow"
	}
	return field
}

// CheckScheduleParams checks a schedule's spec.params against spec, the
// workflow it runs (what, such as `WorkflowTemplate "t"`, names it): a
// param the workflow does not declare (KLN-1014) and a param it requires
// that the schedule gives no value (KLN-1015) are errors naming doc and
// spec.params, as every tick would fail on them.
func CheckScheduleParams(doc *Document, s *apiv1.Schedule, spec apiv1.WorkflowSpec, what string) error {
	_, err := ResolveParams(doc, ScheduleWorkflow(s, spec, time.Time{}), s.Spec.Params)
	declared := make([]string, 0, len(spec.Params))
	for _, p := range spec.Params {
		declared = append(declared, p.Name)
	}
	hint := what + " declares no params"
	if len(declared) > 0 {
		hint = what + " declares: " + strings.Join(declared, ", ")
	}
	for _, e := range apiv1.Errors(err) {
		e.Field, e.Hint = "spec.params", hint
		e.Message = strings.Replace(e.Message, "is not declared", "is not declared by "+what, 1)
		e.Message = strings.Replace(e.Message, "was not given", "is not given a value under spec.params", 1)
	}
	return err
}
