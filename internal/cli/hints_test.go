package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// A server's KLN-4003 carries no hint of its own, so the registered one,
// for HTTP clients, would print: the CLI prints where its token comes
// from instead. A hint the server chose is kept, and other codes too.
func TestAuthErrorsGetTheCLIsHint(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	printError(&b, errors.Join(
		apiv1.Errorf(apiv1.CodeUnauthenticated, "the token is unknown or revoked"),
		apiv1.Errorf(apiv1.CodeForbidden, "viewers may not cancel"),
		&apiv1.Error{Code: apiv1.CodeUnauthenticated, Message: "expired", Hint: "ask for a new one"},
		apiv1.Errorf(apiv1.CodeRunNotFound, "no such run"),
	))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines: %q", len(lines), b.String())
	}
	for i, want := range []string{"--token or KILN_TOKEN", "kiln whoami", "(hint: ask for a new one)", apiv1.CodeRunNotFound.Hint()} {
		if !strings.Contains(lines[i], want) || strings.Contains(lines[i], "Authorization") {
			t.Errorf("line %d %q lacks %q", i, lines[i], want)
		}
	}
}
