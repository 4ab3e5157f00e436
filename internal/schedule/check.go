package schedule

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Check checks what a Schedule's spec says on its own: its name, its
// cron expression and time zone, its policy and limits, and that it runs
// exactly one thing. Errors are coded (KLN-1070..) and name the field;
// the caller adds the file and object. Whether the workflow or template
// it runs checks is the caller's to find out.
func Check(s *apiv1.Schedule) error {
	var errs []error
	if msgs := validation.IsDNS1123Label(s.Metadata.Name); len(msgs) > 0 {
		errs = append(errs, &apiv1.Error{Code: apiv1.CodeInvalidName, Field: "metadata.name", Message: fmt.Sprintf("%q: %s", s.Metadata.Name, msgs[0])})
	}
	if c, err := Parse(&s.Spec); err != nil {
		errs = append(errs, err)
	} else if c.Never(time.Now()) {
		errs = append(errs, NeverFires(s))
	}
	switch s.Spec.ConcurrencyPolicy {
	case "", apiv1.ConcurrencyAllow, apiv1.ConcurrencyForbid, apiv1.ConcurrencyReplace:
	default:
		errs = append(errs, &apiv1.Error{
			Code: apiv1.CodeInvalidValue, Field: "spec.concurrencyPolicy",
			Message: fmt.Sprintf("%q is not a concurrency policy: use Allow, Forbid or Replace", s.Spec.ConcurrencyPolicy),
		})
	}
	errs = append(errs, notNegative("spec.startingDeadlineSeconds", s.Spec.StartingDeadlineSeconds),
		notNegative("spec.successfulRunsHistoryLimit", s.Spec.SuccessfulRunsHistoryLimit),
		notNegative("spec.failedRunsHistoryLimit", s.Spec.FailedRunsHistoryLimit), checkTarget(&s.Spec))
	return errors.Join(errs...)
}

func notNegative[T int | int64](field string, v *T) error {
	if v == nil || *v >= 0 {
		return nil
	}
	return &apiv1.Error{Code: apiv1.CodeOutOfRange, Field: field, Message: fmt.Sprintf("is %d; it must be 0 or more", *v)}
}

// NeverFires is the error of a schedule whose expression matches no
// time in the five years ahead, such as 30 February (KLN-1070).
func NeverFires(s *apiv1.Schedule) error {
	return &apiv1.Error{
		Code: apiv1.CodeCron, Field: "spec.schedule",
		Message: fmt.Sprintf("%q never fires: it matches no time in the next five years", s.Spec.Schedule),
		Hint:    "check the day of the month against the month (no 30 February, no 31 April)",
	}
}

// checkTarget checks that the schedule runs one thing.
func checkTarget(s *apiv1.ScheduleSpec) error {
	ref, inline := s.WorkflowTemplateRef != nil, s.Workflow != nil
	switch {
	case ref && inline:
		return &apiv1.Error{Code: apiv1.CodeScheduleTarget, Field: "spec.workflow", Message: "spec.workflowTemplateRef and spec.workflow are both set; a Schedule runs one of them"}
	case !ref && !inline:
		return &apiv1.Error{Code: apiv1.CodeScheduleTarget, Field: "spec", Message: "a Schedule runs a stored template (spec.workflowTemplateRef) or an inline workflow (spec.workflow); it sets neither"}
	case ref && s.WorkflowTemplateRef.Name == "":
		return &apiv1.Error{Code: apiv1.CodeRequired, Field: "spec.workflowTemplateRef.name", Message: "name the WorkflowTemplate to run"}
	}
	return nil
}
