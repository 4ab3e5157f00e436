package controller

import (
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestStopIntent(t *testing.T) {
	t.Parallel()

	cases := map[string]struct {
		run                          apiv1.Phase
		code                         apiv1.Code
		suspended, suspends, timeout bool
		want                         apiv1.Code
	}{
		"a running run's attempt runs on":               {run: apiv1.PhaseRunning},
		"a cancelling run's attempt is cancelled":       {run: apiv1.PhaseCancelling, timeout: true, want: apiv1.CodeCancelled},
		"a timed-out run's attempt is stopped for it":   {run: apiv1.PhaseFailing, code: apiv1.CodeRunTimeout, want: apiv1.CodeRunTimeout},
		"a failing run lets its attempts finish":        {run: apiv1.PhaseFailing, code: apiv1.CodeExit},
		"a suspended run stops nodes that suspend":      {run: apiv1.PhaseRunning, suspended: true, suspends: true, want: apiv1.CodeSuspended},
		"a suspended run lets other nodes run":          {run: apiv1.PhaseRunning, suspended: true},
		"an attempt past its timeout is stopped for it": {run: apiv1.PhaseRunning, timeout: true, want: apiv1.CodeAttemptTimeout},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := stopIntent(tc.run, tc.code, tc.suspended, tc.suspends, tc.timeout); got != tc.want {
				t.Errorf("stopIntent = %q, want %q", got, tc.want)
			}
		})
	}
}
