package cli

import (
	"errors"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// asFlag is the coded error of a filter the API checks too (KLN-4050 for
// a phase, KLN-4051 for a time), with the same code and words, naming
// the flag rather than the API's parameter.
func asFlag(err error, flag string) error {
	errs := apiv1.Errors(err)
	if len(errs) == 0 {
		return usagef("%s: %v", flag, err)
	}
	named := *errs[0]
	named.Field = flag
	return &named
}

// asUsage is asFlag for an error whose code is not a usage code: the
// flag's value is a usage error (KLN-4002, exit 2), with err's message
// and hint.
func asUsage(err error, flag string) error {
	e := asFlag(err, flag)
	var named *apiv1.Error
	if errors.As(e, &named) {
		named.Code = apiv1.CodeUsage
	}
	return e
}

// limitError is the usage error of a --limit out of range, the same
// embedded and through a server: it is checked before either is asked.
func limitError(limit int) error {
	return &apiv1.Error{
		Code: apiv1.CodeUsage, Field: "--limit",
		Message: fmt.Sprintf("%d is not a number of runs from 1 to %d", limit, apiv1.MaxRunPage),
		Hint: fmt.Sprintf("a page holds at most %d runs; narrow the list with --phase, --since, --until, --search or -l, "+
			"or list older runs with --until set to the last one's creation time", apiv1.MaxRunPage),
	}
}

// usageCodes are the codes of errors in the command line itself: flags or
// arguments no command could take. kiln exits 2 with them, as kubectl
// does for usage.
var usageCodes = map[apiv1.Code]bool{
	apiv1.CodeUsage: true, apiv1.CodeOutputFormat: true, apiv1.CodeUnknownPhase: true, apiv1.CodeBadTime: true,
}
