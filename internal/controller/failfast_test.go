package controller

import (
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestStopsRun(t *testing.T) {
	t.Parallel()

	cases := map[string]struct {
		failFast bool
		stopping apiv1.Phase
		want     bool
	}{
		"failFast stops a running run":               {failFast: true, want: true},
		"without failFast other branches go on":      {},
		"a run already failing is not stopped again": {failFast: true, stopping: apiv1.PhaseFailing},
		"a cancelling run stays cancelling":          {failFast: true, stopping: apiv1.PhaseCancelling},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := stopsRun(tc.failFast, tc.stopping); got != tc.want {
				t.Errorf("stopsRun(%v, %q) = %v, want %v", tc.failFast, tc.stopping, got, tc.want)
			}
		})
	}
}
