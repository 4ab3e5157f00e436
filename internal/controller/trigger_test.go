package controller

import (
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestTriggerRules(t *testing.T) {
	t.Parallel()
	const (
		ok   = apiv1.PhaseSucceeded
		bad  = apiv1.PhaseFailed
		skip = apiv1.PhaseSkipped
		run  = apiv1.PhaseRunning
	)
	for _, tc := range []struct {
		rule       apiv1.TriggerRule
		ups        []apiv1.Phase
		met, final bool
	}{
		{apiv1.TriggerAllSucceeded, nil, true, true},
		{apiv1.TriggerAllSucceeded, []apiv1.Phase{ok, ok}, true, true},
		{apiv1.TriggerAllSucceeded, []apiv1.Phase{ok, run}, false, false},
		{apiv1.TriggerAllSucceeded, []apiv1.Phase{bad, run}, false, true},
		{apiv1.TriggerAllSucceeded, []apiv1.Phase{skip, ok}, false, true},
		{apiv1.TriggerAllDone, []apiv1.Phase{bad, run}, false, false},
		{apiv1.TriggerAllDone, []apiv1.Phase{bad, skip}, true, true},
		{apiv1.TriggerOneSucceeded, []apiv1.Phase{bad, ok}, true, true},
		{apiv1.TriggerOneSucceeded, []apiv1.Phase{bad, skip}, false, true},
		{apiv1.TriggerOneSucceeded, []apiv1.Phase{ok, run}, true, false},
		{apiv1.TriggerOneFailed, []apiv1.Phase{ok, bad}, true, true},
		{apiv1.TriggerOneFailed, []apiv1.Phase{ok, skip}, false, true},
		{apiv1.TriggerOneFailed, []apiv1.Phase{apiv1.PhaseCancelled, ok}, true, true},
		{apiv1.TriggerNoneFailed, []apiv1.Phase{ok, skip}, true, true},
		{apiv1.TriggerNoneFailed, []apiv1.Phase{bad, run}, false, true},
		{apiv1.TriggerNoneFailed, []apiv1.Phase{ok, run}, false, false},
	} {
		met, final := triggerMet(tc.rule, tc.ups)
		if met != tc.met || final != tc.final {
			t.Errorf("%s over %v = (%v, %v), want (%v, %v)", tc.rule, tc.ups, met, final, tc.met, tc.final)
		}
	}
}
