package kube

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Only the API server's refusals that no retry can change end a launch.
func TestRefusedTellsPermanentRefusals(t *testing.T) {
	t.Parallel()
	pods := schema.GroupResource{Resource: "pods"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "p", field.ErrorList{field.Invalid(field.NewPath("spec", "nodeSelector"), "a b", "not a label")})
	cases := map[string]struct {
		err  error
		want bool
	}{
		"no error":                  {nil, false},
		"invalid":                   {fmt.Errorf("creating pod p: %w", invalid), true},
		"forbidden by admission":    {apierrors.NewForbidden(pods, "p", errors.New(`admission webhook "deny.example" denied the request`)), true},
		"forbidden by a full quota": {fmt.Errorf("creating pod p: %w", apierrors.NewForbidden(pods, "p", errors.New("exceeded quota: q, requested: cpu=2, used: cpu=7, limited: cpu=8"))), false},
		"the server is unavailable": {apierrors.NewServiceUnavailable("try later"), false},
		"a conflict":                {apierrors.NewConflict(pods, "p", errors.New("changed")), false},
		"a network error":           {errors.New("dial tcp: connection refused"), false},
	}
	for name, tc := range cases {
		if got := refused(tc.err); got != tc.want {
			t.Errorf("%s: refused(%v) = %v, want %v", name, tc.err, got, tc.want)
		}
	}
}
