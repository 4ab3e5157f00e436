package cli

import apiv1 "kiln.dev/kiln/api/v1alpha1"

// cliHints are the hints of codes whose registered hint speaks to an HTTP
// client (an Authorization header): the CLI says where its token comes
// from instead.
var cliHints = map[apiv1.Code]string{
	apiv1.CodeUnauthenticated: "give the server's token with --token or KILN_TOKEN, or set token: in the context " +
		"(kiln config get-contexts); a server's first start writes an admin token to its KILN_HOME/admin.token and says where (as root, by default /var/lib/kiln/admin.token)",
	apiv1.CodeForbidden: "kiln whoami shows the token's role and projects; use a token of the run's project with the needed role " +
		"(viewer reads, editor submits and cancels, admin manages tokens), with --token, KILN_TOKEN or the context's token",
}

// forCLI is e with the CLI's hint where the code's registered hint is
// for HTTP clients and the server gave none of its own.
func forCLI(e *apiv1.Error) *apiv1.Error {
	h, ok := cliHints[e.Code]
	if !ok || (e.Hint != "" && e.Hint != e.Code.Hint()) {
		return e
	}
	c := *e
	c.Hint = h
	return &c
}
