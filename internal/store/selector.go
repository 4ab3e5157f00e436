package store

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// ParseSelector reads a label selector in kubectl's syntax: key, !key,
// key=value, key==value, key!=value, key in (a,b), key notin (a,b),
// joined by commas (all must hold). "" selects every run. A selector
// that does not parse, or that compares numbers (< and >, which labels of
// runs are not), is a KLN-4006 error of the field "label".
func ParseSelector(s string) (labels.Requirements, error) {
	sel, err := labels.Parse(s)
	if err != nil {
		return nil, selectorError(s, err.Error())
	}
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		if !sqlOperators[r.Operator()] {
			return nil, selectorError(s, fmt.Sprintf("operator %q is not one kiln's run lists take", r.Operator()))
		}
	}
	return reqs, nil
}

// sqlOperators are the operators a run list's label selector takes.
var sqlOperators = map[selection.Operator]bool{
	selection.Exists: true, selection.DoesNotExist: true, selection.Equals: true, selection.DoubleEquals: true,
	selection.NotEquals: true, selection.In: true, selection.NotIn: true,
}

func selectorError(s, why string) *apiv1.Error {
	return &apiv1.Error{
		Code: apiv1.CodeBadRequest, Field: "label",
		Message: fmt.Sprintf("label selector %q does not parse: %s", s, why),
		Hint: "write it as kubectl does: key, !key, key=value, key!=value, key in (a,b) or key notin (a,b), " +
			"joined by commas, e.g. team=vision,env notin (dev)",
	}
}
