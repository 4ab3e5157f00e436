package server

import (
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestABareRunNotFoundNamesTheRunOfThePath(t *testing.T) {
	t.Parallel()
	bare := apiv1.Errorf(apiv1.CodeRunNotFound, "no such run")
	named := &apiv1.Error{Code: apiv1.CodeRunNotFound, Object: "Run/other", Message: "no such run"}
	other := apiv1.Errorf(apiv1.CodeBadRequest, "bad")
	got := namedRun([]*apiv1.Error{bare, named, other}, "wf-1")
	if got[0].Object != "Run/wf-1" || got[0].Message != "no such run" || got[1] != named || got[2] != other {
		t.Errorf("namedRun = %v, %v, %v", got[0], got[1], got[2])
	}
	if bare.Object != "" {
		t.Error("namedRun changed the error it was given")
	}
	if got := namedRun([]*apiv1.Error{bare}, ""); got[0] != bare {
		t.Error("a path without a run named one")
	}
}
