package controller

import apiv1 "kiln.dev/kiln/api/v1alpha1"

// triggerMet applies a trigger rule to the phases of a node's upstream
// nodes, ended or not. final says the answer cannot change: a rule that
// needs every upstream node to have ended waits for them, but one that
// already failed (allSucceeded or noneFailed after a failure) is final at
// once, so dependents are skipped as soon as they can never run.
func triggerMet(rule apiv1.TriggerRule, ups []apiv1.Phase) (met, final bool) {
	var done, succeeded, failed int
	for _, p := range ups {
		switch {
		case !p.Done():
			continue
		case p == apiv1.PhaseSucceeded:
			succeeded++
		case p == apiv1.PhaseFailed || p == apiv1.PhaseCancelled:
			failed++
		}
		done++
	}
	all := done == len(ups)
	switch rule {
	case apiv1.TriggerAllDone:
		return all, all
	case apiv1.TriggerOneSucceeded:
		return succeeded > 0, all
	case apiv1.TriggerOneFailed:
		return failed > 0, all
	case apiv1.TriggerNoneFailed:
		if failed > 0 {
			return false, true
		}
		return all, all
	}
	if done > succeeded {
		return false, true
	}
	return all, all
}
