package node

import (
	"encoding/json"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// JudgeExit is the verdict every kind starts from: an attempt succeeded
// when its deciding process exited 0 and its outputs were read. A cause
// the backend recognised keeps its code; a command that does not exist
// or could not start, or outputs that are missing, are permanent; a
// process the machine killed is a system failure.
func JudgeExit(st *job.Status) Verdict {
	fail := func(code apiv1.Code, msg string, permanent bool) Verdict {
		return Verdict{Phase: apiv1.PhaseFailed, Code: code, Message: msg, Permanent: permanent, System: st.System}
	}
	switch {
	case st.Code != "":
		return fail(apiv1.Code(st.Code), st.Message, st.Permanent)
	case st.NotFound:
		return fail(apiv1.CodeCommandNotFound, st.StartError, true)
	case st.StartError != "":
		return fail(apiv1.CodeStart, st.StartError, true)
	case st.ExitCode != 0 || st.Signal != "":
		return fail(apiv1.CodeExit, ExitMessage(st), false)
	case st.OutputError != "":
		return fail(apiv1.CodeOutput, st.OutputError, true)
	}
	var stored []apiv1.CachedArtifact
	if st.Artifacts != "" {
		if err := json.Unmarshal([]byte(st.Artifacts), &stored); err != nil {
			return fail(apiv1.CodeOutput, fmt.Sprintf("the list of artifacts the task stored is not JSON: %v", err), true)
		}
	}
	return Verdict{Phase: apiv1.PhaseSucceeded, Outputs: st.Outputs, Artifacts: stored}
}

// ExitMessage says how the deciding process of st ended.
func ExitMessage(st *job.Status) string {
	switch {
	case st.Signal != "" && st.System:
		return fmt.Sprintf("the process was killed by %s, not by kiln: the machine's out-of-memory killer or an operator stopped it", st.Signal)
	case st.Signal != "":
		return "the process was killed by " + st.Signal
	}
	return fmt.Sprintf("the process exited with code %d", st.ExitCode)
}
