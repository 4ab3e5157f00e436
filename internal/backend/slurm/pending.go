package slurm

import "strings"

// pendingTexts say in words the pending reasons of Slurm's squeue that
// users meet most (squeue(1), "JOB REASON CODES").
var pendingTexts = map[string]string{
	"None":            "the scheduler has not looked at it yet",
	"Priority":        "jobs of higher priority are ahead of it in the partition",
	"Resources":       "it waits for nodes with the CPUs, memory and GPUs it asks for to free up",
	"Dependency":      "it waits for a job it depends on",
	"BeginTime":       "its start time has not come",
	"JobHeldUser":     "a user holds it (scontrol release)",
	"JobHeldAdmin":    "an administrator holds it",
	"ReqNodeNotAvail": "a node it needs is down, drained or reserved",
	"PartitionDown":   "its partition is down",
	"Reservation":     "it waits for its reservation to start",
}

// pendingText says why a job is pending, from Slurm's reason code; a
// code without words here is given as Slurm names it.
func pendingText(reason string) string {
	if t, ok := pendingTexts[reason]; ok {
		return t
	}
	switch {
	case strings.HasPrefix(reason, "QOS"), strings.HasPrefix(reason, "Assoc"):
		return "a limit of its account or QOS holds it (" + reason + ")"
	case reason == "":
		return "Slurm gives no reason"
	}
	return "Slurm's reason is " + reason
}

// queueReason is the attempt's queue reason for Slurm's reason code:
// the code itself, but "Pending" for Slurm's "None" (not yet looked at),
// which reads as no reason at all.
func queueReason(reason string) string {
	if reason == "" || reason == "None" {
		return "Pending"
	}
	return reason
}
