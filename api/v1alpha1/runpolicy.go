package v1alpha1

// CleanPodPolicy says which of a job's processes (pods, on kubernetes)
// are stopped when the job ends, as training-operator's
// runPolicy.cleanPodPolicy does.
type CleanPodPolicy string

// Clean pod policies.
const (
	// CleanPodPolicyNone leaves every process to end on its own (pods
	// stay); their logs are still collected.
	CleanPodPolicyNone CleanPodPolicy = "None"
	// CleanPodPolicyRunning stops the processes still running (deletes
	// the running pods; finished pods keep their logs). Kiln's default.
	CleanPodPolicyRunning CleanPodPolicy = "Running"
	// CleanPodPolicyAll stops every process and, on kubernetes, deletes
	// every pod of the job, finished ones included.
	CleanPodPolicyAll CleanPodPolicy = "All"
)

// RestartPolicy says whether a failure of a replica group restarts the
// job's gang (within backoffLimit), as a training-operator replica's
// restartPolicy does.
type RestartPolicy string

// Restart policies.
const (
	// RestartPolicyNever: a failure fails the job at once.
	RestartPolicyNever RestartPolicy = "Never"
	// RestartPolicyOnFailure: a failure restarts the gang. The default.
	RestartPolicyOnFailure RestartPolicy = "OnFailure"
	// RestartPolicyAlways: as OnFailure; a gang whose processes all
	// exited 0 has succeeded and is not restarted.
	RestartPolicyAlways RestartPolicy = "Always"
	// RestartPolicyExitCode: exit codes 1-127 are permanent (the job
	// fails), 128-255 and deaths by a signal restart the gang.
	RestartPolicyExitCode RestartPolicy = "ExitCode"
)

// GroupPolicy overrides the job's run policy for one replica group.
type GroupPolicy struct {
	// RestartPolicy of the group's processes.
	RestartPolicy RestartPolicy `json:"restartPolicy,omitempty"`
}

// JobPolicy is what a training job's handler needs of its run policy:
// how its gang is cleaned up and restarted. Kiln copies it from a
// TrainJob's runPolicy; a workflow's train task may set it as policy.
type JobPolicy struct {
	// CleanPodPolicy applies when the job ends; default Running.
	CleanPodPolicy CleanPodPolicy `json:"cleanPodPolicy,omitempty"`
	// RestartPolicy of every group; default OnFailure.
	RestartPolicy RestartPolicy `json:"restartPolicy,omitempty"`
	// Groups override it per replica group, by the group's name: "node"
	// (every framework), "launcher" (mpi), "ps" (tensorflow).
	Groups map[string]GroupPolicy `json:"groups,omitempty"`
}
