package resource

import (
	"errors"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// QuotaOf reads a ProjectQuota's spec into the ledger's Quota. Its errors
// are *apiv1.Error values naming the field (spec.cpu, ...), joined: a
// malformed quantity keeps its own code (KLN-1010, KLN-1023), anything
// else out of range is KLN-1081.
func QuotaOf(s apiv1.ProjectQuotaSpec) (Quota, error) {
	q := Quota{Nominal: Request{Unlimited, Unlimited, Unlimited}, Borrowing: s.MayBorrow(), Weight: int64(s.WeightOrDefault())}
	var errs []error
	field := func(name, v string, parse func(string) (int64, error), into *int64) {
		if v == "" {
			return
		}
		n, err := parse(v)
		var coded *apiv1.Error
		if errors.As(err, &coded) {
			coded.Field = name
			errs = append(errs, coded)
			return
		}
		*into = n
	}
	field("spec.cpu", string(s.CPU), ParseCPU, &q.Nominal.MilliCPU)
	field("spec.memory", string(s.Memory), ParseBytes, &q.Nominal.Memory)
	field("spec.gpu", string(s.GPU), ParseCount, &q.Nominal.GPU)
	if s.Weight < 0 || s.Weight > 1000 {
		errs = append(errs, &apiv1.Error{
			Code: apiv1.CodeQuotaValue, Field: "spec.weight",
			Message: fmt.Sprintf("weight %d is out of range: give 1 to 1000 (default 1)", s.Weight),
			Hint:    "weight is the project's share of spare capacity against other projects': a whole number from 1 to 1000",
		})
	}
	if s.Runs < 0 {
		errs = append(errs, &apiv1.Error{
			Code: apiv1.CodeQuotaValue, Field: "spec.runs",
			Message: fmt.Sprintf("runs %d is negative: give the most unfinished runs the project may have started, or 0 for no limit", s.Runs),
			Hint:    "runs is a whole number: the most runs of the project that may run at once; leave it out for no limit",
		})
	}
	switch s.Preemption {
	case "", apiv1.PreemptNever:
	case apiv1.PreemptLowerPriority:
		q.Preempt = true
	default:
		errs = append(errs, &apiv1.Error{
			Code: apiv1.CodeQuotaValue, Field: "spec.preemption",
			Message: fmt.Sprintf("preemption %s is not Never or LowerPriority", Quote(s.Preemption)),
			Hint:    "preemption: LowerPriority lets the project's tasks evict its lower-priority ones and reclaim what others borrowed; Never (the default) evicts nothing",
		})
	}
	return q, errors.Join(errs...)
}
