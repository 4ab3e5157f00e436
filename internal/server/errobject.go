package server

import apiv1 "kiln.dev/kiln/api/v1alpha1"

// namedRun names run id, from the request's path, as the object of a
// KLN-4001 that does not name one (the store's bare not-found), so that
// a client prints "KLN-4001 Run/ID: no such run" as the embedded engine
// does. The errors are copied, not changed.
func namedRun(errs []*apiv1.Error, id string) []*apiv1.Error {
	if id == "" {
		return errs
	}
	out := make([]*apiv1.Error, len(errs))
	for i, e := range errs {
		out[i] = e
		if e.Code == apiv1.CodeRunNotFound && e.Object == "" {
			named := *e
			named.Object = "Run/" + id
			out[i] = &named
		}
	}
	return out
}
