package workflow

import (
	"errors"
	"fmt"
	"slices"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// ResolveParams returns the value of every declared parameter: the given
// one, or else its default. A given name that is not declared, and a
// declared parameter with neither, are errors.
func ResolveParams(doc *Document, wf *apiv1.Workflow, given map[string]string) (map[string]string, error) {
	var errs []error
	for _, name := range sortedKeys(given) {
		if !slices.ContainsFunc(wf.Spec.Params, func(p apiv1.Param) bool { return p.Name == name }) {
			errs = append(errs, docError(doc, apiv1.CodeUnknownParam, "spec.params", fmt.Sprintf("parameter %q is not declared", name)))
		}
	}
	out := make(map[string]string, len(wf.Spec.Params))
	for i, p := range wf.Spec.Params {
		switch v, ok := given[p.Name]; {
		case ok:
			out[p.Name] = v
		case p.Default != nil:
			out[p.Name] = *p.Default
		default:
			errs = append(errs, docError(doc, apiv1.CodeMissingParam, fmt.Sprintf("spec.params[%d]", i), fmt.Sprintf("parameter %q has no default and was not given", p.Name)))
		}
	}
	return out, errors.Join(errs...)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
