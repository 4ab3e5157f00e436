package controller

import apiv1 "kiln.dev/kiln/api/v1alpha1"

// stopsRun says whether a node that failed for good stops its run: with
// failFast (the default) the run starts nothing new and fails once what
// runs has finished; without it, only the failed node's descendants are
// skipped and every other branch goes on. A run that is already stopping
// is not stopped again.
func stopsRun(failFast bool, stopping apiv1.Phase) bool {
	return failFast && stopping == ""
}
