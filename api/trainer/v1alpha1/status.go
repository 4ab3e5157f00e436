package v1alpha1

import (
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TrainJobView is a run of a TrainJob as Trainer's TrainJob object reads
// for its status: what `kubectl get trainjob -o yaml` shows a Trainer user.
// The run's ID is the annotation kiln.dev/run; the namespace is its project.
type TrainJobView struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta     `json:"metadata"`
	Status   TrainJobStatus `json:"status"`
}

// TrainJobStatus is a TrainJob's status in Trainer's shape. kiln's
// conditions are a superset of Trainer's (Suspended, Complete, Failed):
// Created, Queued, Running and Restarting too.
type TrainJobStatus struct {
	Conditions    []apiv1.Condition    `json:"conditions,omitempty"`
	JobsStatus    []JobStatus          `json:"jobsStatus,omitempty"`
	TrainerStatus *apiv1.TrainerStatus `json:"trainerStatus,omitempty"`
}

// JobStatus counts the child jobs of one replicated job. Trainer runs one
// child Job per replicated job; kiln's counterpart is the replica group
// (node, launcher, ...) of the current attempt, counted as one job.
type JobStatus struct {
	Name      string `json:"name"`
	Ready     int32  `json:"ready"`
	Succeeded int32  `json:"succeeded"`
	Failed    int32  `json:"failed"`
	Active    int32  `json:"active"`
	Suspended int32  `json:"suspended"`
}

// RunAnnotation names the run a view is of.
const RunAnnotation = "kiln.dev/run"

// ViewOf returns run, a run of a TrainJob, in Trainer's shape; false if
// the run is not of a TrainJob.
func ViewOf(run *apiv1.Run) (*TrainJobView, bool) {
	if run.Kind != KindTrainJob {
		return nil, false
	}
	v := &TrainJobView{
		TypeMeta: TypeMeta{APIVersion: APIVersion, Kind: KindTrainJob},
		Metadata: ObjectMeta{Name: run.Name, Namespace: run.Project, Labels: run.Labels, Annotations: map[string]string{RunAnnotation: string(run.ID)}},
	}
	if v.Metadata.Namespace == "" {
		v.Metadata.Namespace = "default"
	}
	for i := range run.Status.Nodes {
		ns := &run.Status.Nodes[i]
		if ns.Kind != apiv1.NodeKindTrain || ns.Parent != "" {
			continue
		}
		v.Status.Conditions = ns.Conditions
		v.Status.TrainerStatus = ns.TrainerStatus
		for _, g := range ns.Replicas {
			v.Status.JobsStatus = append(v.Status.JobsStatus, jobStatus(g, run.Suspend && !ns.Phase.Done()))
		}
	}
	return v, true
}

// jobStatus counts a replica group as Trainer counts its child Job: ready
// and active while its processes run, succeeded when they all exited 0,
// failed when one failed.
func jobStatus(g apiv1.ReplicaGroupStatus, suspended bool) JobStatus {
	js := JobStatus{Name: g.Name}
	total := g.Active + g.Succeeded + g.Failed + g.Stopped
	switch {
	case suspended:
		js.Suspended = 1
	case g.Failed > 0:
		js.Failed = 1
	case total > 0 && g.Succeeded == total:
		js.Succeeded = 1
	case g.Active > 0:
		js.Active = 1
		if g.Active == total {
			js.Ready = 1
		}
	}
	return js
}
