package training

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
)

// Job is a train task merged with its runtime: the values that apply.
type Job struct {
	Plugin  Plugin
	Runtime *apiv1.TrainingRuntimeSpec
	// Ref says which runtime and version Runtime is; nil for a run
	// submitted before kiln kept it.
	Ref            *apiv1.ResolvedRuntimeRef
	Policy         *apiv1.MLPolicy
	NumNodes       int
	NumProcPerNode int
	Command, Args  []string
	Env            []apiv1.EnvVar
	// PerNode is what one node (replica) takes from the pool.
	PerNode resource.Request
	// Retryable lists exit codes that restart the gang; empty: any.
	Retryable       []int32
	ScheduleTimeout time.Duration
	// Image is the trainer's container image, else the runtime template's.
	Image string
	// RunPolicy is how the gang is cleaned up and restarted; nil: defaults.
	RunPolicy *apiv1.JobPolicy
	// Initializers are the initializers whose results the trainer reads.
	Initializers []string
	// ProcsAsWritten is numProcPerNode before it was resolved ("auto"):
	// training-operator's environment passes it on as written.
	ProcsAsWritten string
	// Elastic is the torch elastic policy, nil for a job of fixed size;
	// NumNodes is then its maxNodes.
	Elastic *Elastic
}

// Replicas is the number of nodes the job runs, parameter servers included.
func (j *Job) Replicas() int {
	if j.Policy.TensorFlow != nil && j.Policy.TensorFlow.NumPS != nil {
		return j.NumNodes + int(*j.Policy.TensorFlow.NumPS)
	}
	return j.NumNodes
}

// Request is what the whole gang takes from the pool: all of it at once.
func (j *Job) Request() resource.Request {
	n := int64(j.Replicas())
	return resource.Request{MilliCPU: j.PerNode.MilliCPU * n, Memory: j.PerNode.Memory * n, GPU: j.PerNode.GPU * n}
}

// Retries reports whether a gang that failed with code may restart.
func (j *Job) Retries(code int) bool {
	return len(j.Retryable) == 0 || slices.Contains(j.Retryable, int32(code))
}

// Problem is one thing wrong with a train task, at a field path relative
// to the task.
type Problem struct {
	Code  apiv1.Code
	Field string
	Msg   string
}

// Merge resolves t's runtime in runtimes (unless t carries the one it
// resolved at submit) and merges the two. It returns every problem
// found; the Job is only valid when there are none.
func Merge(t *apiv1.TrainTask, runtimes *Runtimes) (*Job, []Problem) {
	m := &merger{}
	if t.Runtime == "" {
		m.add(apiv1.CodeRequired, "runtime", "runtime is required")
		return nil, m.problems
	}
	rt, ref := t.ResolvedRuntime, t.ResolvedRuntimeRef
	if rt == nil {
		res, p := runtimes.Resolve(t.RuntimeKind, t.Runtime)
		if p != nil {
			return nil, append(m.problems, *p)
		}
		rt, ref = res.Spec, &res.Ref
	}
	switch {
	case t.ResolvedRuntime != nil && len(CheckRuntime(rt)) > 0:
		for _, p := range CheckRuntime(rt) {
			m.add(p.Code, "resolvedRuntime."+p.Field, "%s", p.Msg)
		}
		return nil, m.problems
	case rt.MLPolicy == nil:
		m.add(apiv1.CodeNoMLPolicy, "runtime", "runtime %q has no mlPolicy", t.Runtime)
		return nil, m.problems
	}
	plugin, ok := pluginFor(Frameworks(rt.MLPolicy))
	if !ok {
		m.add(apiv1.CodeNoMLPolicy, "runtime", "runtime %q must set exactly one framework in mlPolicy, it sets %v", t.Runtime, Frameworks(rt.MLPolicy))
		return nil, m.problems
	}
	j := m.merge(t, rt, plugin)
	j.Ref = ref
	return j, m.problems
}

type merger struct{ problems []Problem }

func (m *merger) add(code apiv1.Code, field, format string, args ...any) {
	m.problems = append(m.problems, Problem{code, field, fmt.Sprintf(format, args...)})
}

func (m *merger) merge(t *apiv1.TrainTask, rt *apiv1.TrainingRuntimeSpec, plugin Plugin) *Job {
	tmpl := rt.Template
	if tmpl == nil {
		tmpl = &apiv1.Trainer{}
	}
	j := &Job{
		Plugin: plugin, Runtime: rt, Policy: rt.MLPolicy, Command: first(t.Command, tmpl.Command),
		Args: first(t.Args, tmpl.Args), Env: append(append([]apiv1.EnvVar(nil), tmpl.Env...), t.Env...),
		Image: t.Image, RunPolicy: t.Policy, Initializers: t.Initializers,
	}
	if j.Image == "" {
		j.Image = tmpl.Image
	}
	j.NumNodes = m.numNodes(t, tmpl, rt.MLPolicy)
	m.elastic(t, j)
	resources := t.ResourcesPerNode
	if resources == nil {
		resources = tmpl.ResourcesPerNode
	}
	j.PerNode = m.resources(resources)
	j.NumProcPerNode = m.procs(t, tmpl, rt.MLPolicy, resources, j.PerNode)
	j.ProcsAsWritten = string(procsWritten(t, tmpl, rt.MLPolicy))
	if resources == nil || resources.CPU == "" {
		j.PerNode.MilliCPU = int64(j.NumProcPerNode) * 1000 // one CPU per process
	}
	if len(j.Command) == 0 && !j.Entrypoint() {
		m.add(apiv1.CodeRequired, "command", "the trainer needs a command, here or in the runtime's template")
	}
	m.env(j.Env, plugin)
	m.operatorEnv("env", j.Env, rt.MLPolicy)
	if rt.FailurePolicy != nil {
		j.Retryable = rt.FailurePolicy.RetryableExitCodes
	}
	if g := rt.GangPolicy; g != nil && g.ScheduleTimeoutSeconds != nil && *g.ScheduleTimeoutSeconds > 0 {
		j.ScheduleTimeout = min(time.Duration(*g.ScheduleTimeoutSeconds)*time.Second, MaxDuration)
	}
	if p := int64(j.Replicas()) * int64(j.NumProcPerNode); p > MaxReplicas || p < 1 {
		m.add(apiv1.CodeOutOfRange, "numNodes", "%d nodes of %d processes is %d processes, out of range: a job runs from 1 to %d", j.Replicas(), j.NumProcPerNode, p, MaxReplicas)
		return j
	}
	m.gangBounds(j)
	m.checkPolicy(j)
	return j
}

func first(a, b []string) []string {
	if len(a) > 0 {
		return a
	}
	return b
}

func (m *merger) numNodes(t *apiv1.TrainTask, tmpl *apiv1.Trainer, p *apiv1.MLPolicy) int {
	n := int32(1)
	for _, v := range []*int32{p.NumNodes, tmpl.NumNodes, t.NumNodes} {
		if v != nil {
			n = *v
		}
	}
	if n < 1 || n > MaxReplicas {
		m.add(apiv1.CodeOutOfRange, "numNodes", "numNodes is %d, out of range: it lies from 1 to %d", n, MaxReplicas)
		return 1
	}
	return int(n)
}

func (m *merger) resources(r *apiv1.Resources) resource.Request {
	var out resource.Request
	if r == nil {
		return out
	}
	parse := func(field, s string, f func(string) (int64, error)) int64 {
		if s == "" {
			return 0
		}
		v, err := f(s)
		if err != nil {
			code, msg := apiv1.CodeQuantity, err.Error()
			var e *apiv1.Error
			if errors.As(err, &e) {
				code, msg = e.Code, e.Message
			}
			m.add(code, "resourcesPerNode."+field, "%s", msg)
		}
		return v
	}
	out.MilliCPU = parse("cpu", string(r.CPU), resource.ParseCPU)
	out.Memory = parse("memory", string(r.Memory), resource.ParseBytes)
	out.GPU = parse("gpu", string(r.GPU), resource.ParseCount)
	return out
}

// procs resolves numProcPerNode: a number, or auto (GPUs if any, else the
// node's whole CPUs, at least 1), cpu or gpu. Frameworks that run one
// process per node ignore it.
func (m *merger) procs(t *apiv1.TrainTask, tmpl *apiv1.Trainer, p *apiv1.MLPolicy, r *apiv1.Resources, per resource.Request) int {
	v := procsWritten(t, tmpl, p)
	cpus := int(max(per.MilliCPU/1000, 1))
	switch strings.ToLower(string(v)) {
	case "auto":
		if per.GPU > 0 {
			return int(per.GPU)
		}
		if r != nil && r.CPU != "" {
			return cpus
		}
		return 1
	case "cpu":
		return cpus
	case "gpu":
		return int(max(per.GPU, 1))
	}
	n, err := strconv.Atoi(string(v))
	switch {
	case errors.Is(err, strconv.ErrRange) || err == nil && (n < 1 || n > MaxReplicas):
		m.add(apiv1.CodeOutOfRange, "numProcPerNode", "numProcPerNode is %s, out of range: it lies from 1 to %d (or auto, cpu or gpu)", resource.Quote(string(v)), MaxReplicas)
		return 1
	case err != nil:
		m.add(apiv1.CodeInvalidValue, "numProcPerNode", "numProcPerNode is %s, want a whole number from 1 to %d, auto, cpu or gpu", resource.Quote(string(v)), MaxReplicas)
		return 1
	}
	if p.Torch == nil && p.MPI == nil && n != 1 {
		m.add(apiv1.CodeInvalidValue, "numProcPerNode", "numProcPerNode applies to torch and mpi only; this framework runs one process per node")
	}
	return n
}

// procsWritten is numProcPerNode as the task, else the runtime's template,
// else its policy writes it (default 1).
func procsWritten(t *apiv1.TrainTask, tmpl *apiv1.Trainer, p *apiv1.MLPolicy) apiv1.Quantity {
	v := apiv1.Quantity("1")
	switch {
	case p.Torch != nil && p.Torch.NumProcPerNode != nil:
		v = *p.Torch.NumProcPerNode
	case p.MPI != nil && p.MPI.NumProcPerNode != nil:
		v = apiv1.Quantity(strconv.Itoa(int(*p.MPI.NumProcPerNode)))
	}
	for _, q := range []*apiv1.Quantity{tmpl.NumProcPerNode, t.NumProcPerNode} {
		if q != nil {
			v = *q
		}
	}
	return v
}

func (m *merger) env(env []apiv1.EnvVar, p Plugin) { m.envAt("env", env, p) }

// envAt refuses the variables of env, written at field, that kiln or
// the plugin set.
func (m *merger) envAt(field string, env []apiv1.EnvVar, p Plugin) {
	for i, e := range env {
		switch {
		case strings.HasPrefix(e.Name, "KILN_"):
			m.add(apiv1.CodeReservedEnv, fmt.Sprintf("%s[%d].name", field, i), "%q is reserved: names starting with KILN_ are set by kiln", e.Name)
		case slices.Contains(p.Reserved(), e.Name):
			m.add(apiv1.CodeReservedEnv, fmt.Sprintf("%s[%d].name", field, i), "%q is set by the %s runtime and may not be set by the job", e.Name, p.Name())
		}
	}
}
