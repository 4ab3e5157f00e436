package training

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// Replica groups: every framework's nodes, MPI's launcher, TensorFlow's
// parameter servers. A TensorFlow chief and its workers are nodes.
const (
	GroupNode     = "node"
	GroupLauncher = "launcher"
	GroupPS       = "ps"
)

// Groups returns the replica groups the job's processes fall into.
func (j *Job) Groups() []string {
	switch {
	case j.Policy.MPI != nil:
		return []string{GroupLauncher}
	case j.Policy.TensorFlow != nil && j.Replicas() > j.NumNodes:
		return []string{GroupNode, GroupPS}
	}
	return []string{GroupNode}
}

// GroupOf returns the replica group of the process a plugin named
// ("node-1-0", "launcher", "chief-0", "worker-2", "ps-0").
func GroupOf(process string) string {
	prefix, _, _ := strings.Cut(process, "-")
	switch prefix {
	case GroupLauncher, GroupPS:
		return prefix
	}
	return GroupNode
}

// SetGroups names the replica group of every process of spec.
func SetGroups(spec *job.Spec) {
	for i := range spec.Processes {
		spec.Processes[i].Group = GroupOf(spec.Processes[i].Name)
	}
}

// RestartPolicy returns the restart policy of a group: its own override,
// else the job's, else OnFailure.
func (j *Job) RestartPolicy(group string) apiv1.RestartPolicy {
	if j.RunPolicy == nil {
		return apiv1.RestartPolicyOnFailure
	}
	if g, ok := j.RunPolicy.Groups[group]; ok && g.RestartPolicy != "" {
		return g.RestartPolicy
	}
	if j.RunPolicy.RestartPolicy != "" {
		return j.RunPolicy.RestartPolicy
	}
	return apiv1.RestartPolicyOnFailure
}

// Clean returns what the backend does with the gang's processes still
// running when the job ends: Running (stop them) unless cleanPodPolicy
// says otherwise.
func (j *Job) Clean() job.Clean {
	if j.RunPolicy == nil {
		return job.CleanRunning
	}
	switch j.RunPolicy.CleanPodPolicy {
	case apiv1.CleanPodPolicyNone:
		return job.CleanNone
	case apiv1.CleanPodPolicyAll:
		return job.CleanAll
	}
	return job.CleanRunning
}

// Restartable reports whether a failure under policy p, with exit code
// (or signal) as given, may restart the gang; why says why not.
// training-operator's ExitCode rule: 1-127 are the program's own errors,
// permanent; 128-255 (and deaths by a signal, which a shell reports as
// 128+n) come from outside it, retryable.
func Restartable(p apiv1.RestartPolicy, exit int, signal string) (ok bool, why string) {
	switch p {
	case apiv1.RestartPolicyNever:
		return false, "restartPolicy is Never"
	case apiv1.RestartPolicyExitCode:
		if signal != "" || exit >= 128 && exit <= 255 {
			return true, ""
		}
		return false, fmt.Sprintf("restartPolicy is ExitCode and exit code %d (1-127) is permanent", exit)
	}
	return true, ""
}

// checkPolicy reports what is wrong with a job's run policy, at fields
// relative to the task ("policy.groups.worker").
func (m *merger) checkPolicy(j *Job) {
	p := j.RunPolicy
	if p == nil {
		return
	}
	switch p.CleanPodPolicy {
	case "", apiv1.CleanPodPolicyNone, apiv1.CleanPodPolicyRunning, apiv1.CleanPodPolicyAll:
	default:
		m.add(apiv1.CodeRunPolicyValue, "policy.cleanPodPolicy", "cleanPodPolicy %q is not None, Running or All", p.CleanPodPolicy)
	}
	m.restartPolicy("policy.restartPolicy", p.RestartPolicy)
	groups := make([]string, 0, len(p.Groups))
	for g := range p.Groups {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		if !slices.Contains(j.Groups(), g) {
			m.add(apiv1.CodeReplicaGroup, "policy.groups."+g, "this %s job has no replica group %q: it has %s",
				j.Plugin.Name(), g, strings.Join(j.Groups(), ", "))
		}
		m.restartPolicy("policy.groups."+g+".restartPolicy", p.Groups[g].RestartPolicy)
	}
}

func (m *merger) restartPolicy(field string, p apiv1.RestartPolicy) {
	switch p {
	case "", apiv1.RestartPolicyNever, apiv1.RestartPolicyOnFailure, apiv1.RestartPolicyAlways, apiv1.RestartPolicyExitCode:
		return
	}
	m.add(apiv1.CodeRunPolicyValue, field, "restartPolicy %q is not Never, OnFailure, Always or ExitCode", p)
}
