package client

import (
	"errors"
	"fmt"
	"net/url"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// unreachable is the KLN-5060 error of a request that never reached the
// server at base: err says why (connection refused, no such host).
func unreachable(base string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is said once, in the message
	}
	return &apiv1.Error{
		Code:    apiv1.CodeServerUnreachable,
		Message: fmt.Sprintf("the kiln server at %s cannot be reached: %v", base, err),
	}
}

// apiErrors turns the errors of an error response into one error. A
// server names the object of an error in its place (Run/ID) as the
// embedded engine does, so both print the same line.
func apiErrors(list []*apiv1.Error) error {
	errs := make([]error, len(list))
	for i, x := range list {
		errs[i] = x
	}
	return errors.Join(errs...)
}
