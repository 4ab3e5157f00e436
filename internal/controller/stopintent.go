package controller

import apiv1 "kiln.dev/kiln/api/v1alpha1"

// stopIntent is why an attempt that a run loaded from the store holds
// running must be stopped, or "" if it may run on. The engine that was
// stopping it may have died before the attempt ended (a second Ctrl-C, a
// kill -9): the new engine finishes the job, and records the attempt's
// end as what it was, a cancel rather than a failure. In order: the run
// is being cancelled, the run timed out, the run is suspended and the
// node stops when it is, the attempt ran out of time.
func stopIntent(run apiv1.Phase, code apiv1.Code, suspended, suspends, timedOut bool) apiv1.Code {
	switch {
	case run == apiv1.PhaseCancelling:
		return apiv1.CodeCancelled
	case run == apiv1.PhaseFailing && code == apiv1.CodeRunTimeout:
		return apiv1.CodeRunTimeout
	case suspended && suspends:
		return apiv1.CodeSuspended
	case timedOut:
		return apiv1.CodeAttemptTimeout
	}
	return ""
}
