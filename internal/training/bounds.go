package training

import (
	"fmt"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
)

// Bounds of a training job's numbers. A job of MaxReplicas processes of
// the largest request stays within int64, so the gang's request is
// checked, not computed past its bound.
const (
	// MaxReplicas bounds the processes of one job: nodes (parameter
	// servers included) times processes per node, and each of them alone.
	MaxReplicas = 1024
	// MaxRestarts bounds a runtime's failurePolicy.maxRestarts, as a
	// task's retries are bounded.
	MaxRestarts = 100
	// MaxDuration bounds every timeout kiln takes, in a duration or in
	// seconds: one year.
	MaxDuration = 365 * 24 * time.Hour
	// maxExitCode is the largest exit status a process can have.
	maxExitCode = 255
)

// CheckRuntime checks the numbers of a runtime's spec: counts, seconds
// and exit codes, each within its bounds. Fields are relative to rt.
func CheckRuntime(rt *apiv1.TrainingRuntimeSpec) []Problem {
	m := &merger{}
	if p := rt.MLPolicy; p != nil {
		m.count("mlPolicy.numNodes", p.NumNodes, 1, MaxReplicas)
		if p.MPI != nil {
			m.count("mlPolicy.mpi.numProcPerNode", p.MPI.NumProcPerNode, 1, MaxReplicas)
		}
		if p.TensorFlow != nil {
			m.count("mlPolicy.tensorflow.numPS", p.TensorFlow.NumPS, 0, MaxReplicas)
		}
		m.checkOperator(p)
	}
	if rt.Template != nil {
		m.count("template.numNodes", rt.Template.NumNodes, 1, MaxReplicas)
	}
	m.checkElastic(rt)
	if g := rt.GangPolicy; g != nil {
		m.count("gangPolicy.scheduleTimeoutSeconds", g.ScheduleTimeoutSeconds, 1, int32(MaxDuration/time.Second))
		m.checkPodGroup(g)
	}
	if f := rt.FailurePolicy; f != nil {
		m.count("failurePolicy.maxRestarts", f.MaxRestarts, 0, MaxRestarts)
		for i, code := range f.RetryableExitCodes {
			m.count(fmt.Sprintf("failurePolicy.retryableExitCodes[%d]", i), &code, 0, maxExitCode)
		}
	}
	return m.problems
}

// count adds KLN-1023 at field unless v is nil or lies from least to most.
func (m *merger) count(field string, v *int32, least, most int32) {
	if v != nil && (*v < least || *v > most) {
		m.add(apiv1.CodeOutOfRange, field, "%s is %d, out of range: it lies from %d to %d", last(field), *v, least, most)
	}
}

// last is the last name of a field path, for messages.
func last(field string) string {
	for i := len(field) - 1; i >= 0; i-- {
		if field[i] == '.' {
			return field[i+1:]
		}
	}
	return field
}

// gangBounds checks that the whole gang, every replica's request at once,
// stays within what one request may take, without computing a product
// that could overflow.
func (m *merger) gangBounds(j *Job) {
	n := int64(j.Replicas())
	if n < 1 {
		return
	}
	for _, r := range []struct {
		field      string
		per, most  int64
		unit, maxs string
	}{
		{"cpu", j.PerNode.MilliCPU, resource.MaxMilliCPU, "m", "100000 CPUs"},
		{"memory", j.PerNode.Memory, resource.MaxMemory, " bytes", "1Ei of memory"},
		{"gpu", j.PerNode.GPU, resource.MaxGPU, "", "100000 GPUs"},
	} {
		if r.per > r.most/n {
			m.add(apiv1.CodeOutOfRange, "resourcesPerNode."+r.field, "%d nodes of %d%s each ask for more than %s, the most one job may take", n, r.per, r.unit, r.maxs)
		}
	}
}
