package workflow

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/dag"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/training"
)

// Limits that keep a spec reasonable, and its arithmetic far from
// overflowing.
const (
	maxRetries = 100
	maxTasks   = 100_000
	// maxFactor bounds a retry backoff's factor.
	maxFactor = 100
	// maxPriority bounds a priority both ways.
	maxPriority = 1_000_000_000
	// maxDuration bounds every duration: one year.
	maxDuration = training.MaxDuration
)

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// checker collects every problem found in one document.
type checker struct {
	doc      *Document
	runtimes *training.Runtimes
	errs     []error
	// lib holds the workflows tasks may run as subworkflows; running
	// names the workflows being compiled, outermost first, to find cycles.
	lib     Library
	running []string
	// stored finds the project's stored templates, for the subworkflows
	// lib does not hold; nil finds none.
	stored *lookup
	// exit says the tasks being compiled are onExit tasks, which may read
	// {{workflow.status}} and {{workflow.failures}}; exitMain is then the
	// plan whose onExit they are, whose tasks their conditions may read.
	inExit   bool
	exitMain *Plan
	// fed is the federation of the workflow being compiled, nil when it
	// is not federated; fedAdmission and fedParty are its timeouts.
	fed                    *apiv1.Federation
	fedAdmission, fedParty time.Duration
	// fedRoles names fed's roles, for errors.
	fedRoles string
	// fedTooBig says fed has too many parties to list its tasks' shares;
	// shares counts the shares listed so far.
	fedTooBig bool
	shares    int
	// crossInputs, when compiling a party's part, are the other parties'
	// outputs its tasks read, as SHARE/TASK.PARAM ({{federation.TASK.PARAM}}).
	crossInputs map[string]bool
	// tally keeps the first apiv1.MaxOfKind errors of each kind that add
	// and addHint are given, and counts the rest; uncapped keeps them all
	// (errors whose fields are rewritten after, see compileParts).
	tally    tally
	uncapped bool
}

// keep counts an error of code at field and says whether errs takes it.
func (c *checker) keep(code apiv1.Code, field string) bool {
	return c.uncapped || c.tally.keep(code, field)
}

// err joins errs, at most apiv1.MaxOfKind of a kind (see tally); nil when
// there are none.
func (c *checker) err() error {
	return c.tally.join(c.errs)
}

func (c *checker) add(code apiv1.Code, field, format string, args ...any) {
	if c.keep(code, field) {
		c.errs = append(c.errs, docError(c.doc, code, field, fmt.Sprintf(format, args...)))
	}
}

// addHint is add with a hint of the problem's own, for when the code's
// registered hint does not fit it.
func (c *checker) addHint(code apiv1.Code, field, hint, format string, args ...any) {
	if !c.keep(code, field) {
		return
	}
	e := docError(c.doc, code, field, fmt.Sprintf(format, args...))
	e.Hint = hint
	c.errs = append(c.errs, e)
}

// Compile validates wf, read from doc, and compiles it into a Plan. Train
// tasks find their runtime in runtimes (nil: the built-in ones) unless
// they carry a resolved one. The error joins one *apiv1.Error per
// problem; no Plan is returned with it.
func Compile(doc *Document, wf *apiv1.Workflow, runtimes *training.Runtimes) (*Plan, error) {
	return CompileWith(doc, wf, runtimes, nil)
}

// CompileWith is Compile for a workflow whose tasks may run the
// workflows of lib as subworkflows.
func CompileWith(doc *Document, wf *apiv1.Workflow, runtimes *training.Runtimes, lib Library) (*Plan, error) {
	return compileWith(doc, wf, runtimes, lib, nil)
}

// compileWith is CompileWith that looks up, in stored, the subworkflows
// lib does not hold.
func compileWith(doc *Document, wf *apiv1.Workflow, runtimes *training.Runtimes, lib Library, stored *lookup) (*Plan, error) {
	c := &checker{doc: doc, runtimes: runtimes, lib: lib, stored: stored, running: []string{wf.Metadata.Name}}
	p := c.workflow(wf)
	if len(c.errs) > 0 {
		return nil, c.err()
	}
	p.Graph.Compact() // read from now on: packed, 8 bytes a task instead of 48
	return p, nil
}

// workflow compiles wf, with its subworkflows, onExit tasks and outputs.
func (c *checker) workflow(wf *apiv1.Workflow) *Plan {
	p := &Plan{Workflow: wf, FailFast: wf.Spec.FailFast == nil || *wf.Spec.FailFast, File: c.doc.File, Object: c.doc.Object()}
	c.name("metadata.name", wf.Metadata.Name)
	p.Timeout, p.TimeoutName = c.duration("spec.timeout", wf.Spec.Timeout), "timeout"
	if wf.Kind != apiv1.KindWorkflow && strings.HasSuffix(wf.Kind, "Job") { // TrainJob, PyTorchJob, ...: spec.runPolicy
		p.TimeoutName = "runPolicy.activeDeadlineSeconds"
	}
	c.life(&wf.Spec)
	c.federation(wf)
	params := c.params(wf.Spec.Params)
	if len(wf.Spec.Tasks) == 0 {
		c.add(apiv1.CodeRequired, "spec.tasks", "a workflow needs at least one task")
	}
	c.tasks(p, "spec.tasks", wf.Spec.Tasks, params)
	c.refs("spec.image", wf.Spec.Image, -1, p, params) // expanded in each task that takes it
	if len(wf.Spec.OnExit) > 0 {
		c.exit(p, wf.Spec.OnExit, params)
	}
	p.Outputs = wf.Spec.Outputs
	c.workflowOutputs("spec.outputs", wf.Spec.Outputs, p, params)
	c.parts(p)
	return p
}

// tasks compiles the tasks of one graph, written at base, into p.
func (c *checker) tasks(p *Plan, base string, tasks []apiv1.Task, params map[string]bool) {
	if len(tasks) > maxTasks {
		c.add(apiv1.CodeOutOfRange, base, "%d tasks, out of range: at most %d are allowed", len(tasks), maxTasks)
	}
	p.Index = make(map[string]int, len(tasks))
	p.Tasks = make([]Task, len(tasks))
	for i := range tasks {
		t := &tasks[i]
		p.Tasks[i] = c.task(fmt.Sprintf("%s[%d]", base, i), t)
		if _, dup := p.Index[t.Name]; dup && t.Name != "" {
			c.add(apiv1.CodeDuplicate, fmt.Sprintf("%s[%d].name", base, i), "task name %q is used twice", t.Name)
			continue
		}
		p.Index[t.Name] = i
		if err := p.Tasks[i].place(p.Workflow, fmt.Sprintf("%s[%d]", base, i)); err != nil {
			c.add(apiv1.CodeInvalidValue, fmt.Sprintf("%s[%d].podTemplate", base, i), "cannot merge the pod template over its runtime's: %v", err)
		}
	}
	p.MinRequest = minRequest(p.Tasks)
	p.Graph = c.graph(base, tasks, c.dependsTasks(base, tasks, p), p.Index)
	c.subworkflows(base, p)
	c.templates(base, tasks, p, params)
	c.conditions(base, tasks, p, params)
}

func (c *checker) name(field, name string) {
	if name == "" {
		c.add(apiv1.CodeRequired, field, "name is required")
		return
	}
	switch {
	case len(name) > validation.DNS1123LabelMaxLength:
		c.add(apiv1.CodeInvalidName, field, "%q is %d characters long, more than %d", name, len(name), validation.DNS1123LabelMaxLength)
	case len(validation.IsDNS1123Label(name)) > 0:
		c.add(apiv1.CodeInvalidName, field, "%q is not a DNS-1123 label", name)
	}
}

func (c *checker) duration(field, s string) time.Duration {
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		c.add(apiv1.CodeDuration, field, "%s is not a duration", resource.Quote(s))
		return 0
	case d <= 0 || d > maxDuration:
		c.add(apiv1.CodeOutOfRange, field, "%s is out of range: durations lie from 1ns to %s (one year)", resource.Quote(s), shortDuration(maxDuration))
		return 0
	}
	return d
}

// shortDuration formats d without trailing zero units: 8760h, not 8760h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	s, _ = strings.CutSuffix(s, "0s")
	s, _ = strings.CutSuffix(s, "0m")
	return s
}

// priority checks a task's priority.
func (c *checker) priority(field string, p int32) {
	if p < -maxPriority || p > maxPriority {
		c.add(apiv1.CodeOutOfRange, field, "priority is %d, out of range: it lies from %d to %d", p, -maxPriority, maxPriority)
	}
}

func (c *checker) params(params []apiv1.Param) map[string]bool {
	seen := make(map[string]bool, len(params))
	for i, p := range params {
		field := fmt.Sprintf("spec.params[%d].name", i)
		switch {
		case p.Name == "":
			c.add(apiv1.CodeRequired, field, "name is required")
		case !identifier.MatchString(p.Name):
			c.add(apiv1.CodeInvalidName, field, "%q is not a parameter name: use letters, digits, '_' and '-', starting with a letter or '_'", p.Name)
		case seen[p.Name]:
			c.add(apiv1.CodeDuplicate, field, "parameter %q is declared twice", p.Name)
		}
		seen[p.Name] = true
	}
	return seen
}

func (c *checker) task(field string, t *apiv1.Task) Task {
	c.name(field+".name", t.Name)
	c.priority(field+".priority", t.Priority)
	var out Task
	switch {
	case t.Train != nil:
		out = c.trainTask(field, t)
	case t.Initialize != nil:
		out = c.initializeTask(field, t)
	case t.Gate != nil || t.Workflow != nil || t.Sensor != nil:
		out = Task{Spec: t}
	default:
		out = c.commandTask(field, t)
	}
	c.trigger(field, t, &out)
	c.kind(field, t, &out)
	c.federate(field, t, &out)
	return out
}

func (c *checker) commandTask(field string, t *apiv1.Task) Task {
	if len(t.Command) == 0 || t.Command[0] == "" {
		c.addHint(apiv1.CodeRequired, field+".command", "a task runs a command, a training job (train), a workflow, a gate or a sensor",
			"command is required and its first item must not be empty")
	}
	c.env(field+".env", t.Env)
	c.outputs(field+".outputs", t.Outputs, t.Dynamic != nil)
	out := Task{
		Spec: t, Kind: apiv1.NodeKindCommand,
		Timeout:          c.duration(field+".timeout", t.Timeout),
		AdmissionTimeout: c.duration(field+".admissionTimeout", t.AdmissionTimeout),
		Retry:            c.retry(field+".retries", t.Retries),
		Request:          c.request(field+".resources", t.Resources),
	}
	out.PerHost = out.Request
	return out
}

func (c *checker) env(field string, env []apiv1.EnvVar) {
	seen := map[string]bool{}
	for i, e := range env {
		f := fmt.Sprintf("%s[%d].name", field, i)
		switch {
		case e.Name == "" || strings.ContainsAny(e.Name, "=\x00"):
			c.add(apiv1.CodeInvalidName, f, "%q is not an environment variable name", e.Name)
		case strings.HasPrefix(e.Name, "KILN_"):
			c.add(apiv1.CodeReservedEnv, f, "%q is reserved: names starting with KILN_ are set by kiln", e.Name)
		case seen[e.Name]:
			c.add(apiv1.CodeDuplicate, f, "variable %q is set twice", e.Name)
		}
		seen[e.Name] = true
		if e.ValueFrom != nil {
			vf := fmt.Sprintf("%s[%d].valueFrom.secret", field, i)
			if e.Value != "" {
				c.addHint(apiv1.CodeInvalidValue, vf, "keep one of value and valueFrom", "variable %q has both value and valueFrom", e.Name)
			}
			if msgs := validation.IsDNS1123Subdomain(e.ValueFrom.Secret); len(msgs) > 0 {
				c.addHint(apiv1.CodeInvalidName, vf, "use a secret's name: lowercase letters, digits, '-' and '.'",
					"%q is not a secret name", e.ValueFrom.Secret)
			}
		}
	}
}

// outputs checks a task's declared outputs. A dynamic task's artifacts
// (fromFragment) are its fragment's outputs, with no path of their own.
func (c *checker) outputs(field string, o *apiv1.Outputs, fromFragment bool) {
	if o == nil {
		return
	}
	seen := map[string]bool{}
	for i, p := range o.Parameters {
		c.outputName(fmt.Sprintf("%s.parameters[%d].name", field, i), p.Name, seen)
	}
	seen = map[string]bool{}
	for i, a := range o.Artifacts {
		c.outputName(fmt.Sprintf("%s.artifacts[%d].name", field, i), a.Name, seen)
		pf := fmt.Sprintf("%s.artifacts[%d].path", field, i)
		clean := filepath.Clean(a.Path)
		switch {
		case fromFragment && a.Path != "":
			c.addHint(apiv1.CodeInvalidValue, pf, "drop path: the fragment's outputs.artifacts gives the artifact",
				"a dynamic task's artifact is its fragment's output, not a file of its own command")
		case fromFragment:
		case a.Path == "":
			c.add(apiv1.CodeRequired, pf, "path is required")
		case filepath.IsAbs(a.Path) || clean == ".." || strings.HasPrefix(clean, "../"):
			c.addHint(apiv1.CodeInvalidValue, pf, "name a file under $KILN_OUTPUTS, such as model/weights.bin",
				"path %q must be relative and stay inside the output directory", a.Path)
		}
	}
}

func (c *checker) outputName(field, name string, seen map[string]bool) {
	switch {
	case name == "":
		c.add(apiv1.CodeRequired, field, "name is required")
	case !identifier.MatchString(name):
		c.add(apiv1.CodeInvalidName, field, "%q is not an output name: use letters, digits, '_' and '-'", name)
	case seen[name]:
		c.add(apiv1.CodeDuplicate, field, "output %q is declared twice", name)
	}
	seen[name] = true
}

func (c *checker) retry(field string, r *apiv1.RetryStrategy) Retry {
	out := Retry{Factor: 2}
	if r == nil {
		return out
	}
	if r.Limit < 0 || r.Limit > maxRetries {
		c.add(apiv1.CodeOutOfRange, field+".limit", "limit is %d, out of range: it lies from 0 to %d", r.Limit, maxRetries)
	}
	out.Limit = min(max(r.Limit, 0), maxRetries)
	if b := r.Backoff; b != nil {
		out.Backoff = c.duration(field+".backoff.duration", b.Duration)
		out.Max = c.duration(field+".backoff.max", b.Max)
		if b.Factor != nil {
			if f := *b.Factor; !(f >= 1 && f <= maxFactor) { // NaN is neither
				c.add(apiv1.CodeOutOfRange, field+".backoff.factor", "factor is %v, out of range: it lies from 1 to %d", f, maxFactor)
			} else {
				out.Factor = f
			}
		}
	}
	return out
}

func (c *checker) request(field string, r *apiv1.Resources) resource.Request {
	if r == nil {
		return defaultRequest
	}
	out := defaultRequest
	if r.CPU != "" {
		out.MilliCPU = c.quantity(field+".cpu", string(r.CPU), resource.ParseCPU)
	}
	if r.Memory != "" {
		out.Memory = c.quantity(field+".memory", string(r.Memory), resource.ParseBytes)
	}
	if r.GPU != "" {
		out.GPU = c.quantity(field+".gpu", string(r.GPU), resource.ParseCount)
	}
	return out
}

func (c *checker) quantity(field, s string, parse func(string) (int64, error)) int64 {
	n, err := parse(s)
	if err != nil {
		c.addCoded(apiv1.CodeQuantity, field, err)
	}
	return n
}

// addCoded adds err at field with err's own code, message and hint when
// it is an *apiv1.Error, else with code.
func (c *checker) addCoded(code apiv1.Code, field string, err error) {
	var e *apiv1.Error
	if !errors.As(err, &e) {
		c.add(code, field, "%v", err)
		return
	}
	c.addHint(e.Code, field, e.Hint, "%s", e.Message)
}

// graph builds the dependency graph and reports unknown and cyclic
// dependencies. It returns nil when the graph is not a DAG.
func (c *checker) graph(base string, tasks []apiv1.Task, deps [][]string, index map[string]int) *dag.Graph {
	g := dag.New(len(tasks))
	ok := true
	for i, t := range tasks {
		seen := map[string]bool{}
		for j, dep := range deps[i] {
			field := fmt.Sprintf("%s[%d].dependsOn[%d]", base, i, j)
			if t.Depends != "" {
				field = fmt.Sprintf("%s[%d].depends", base, i)
			}
			up, found := index[dep]
			switch {
			case !found:
				c.add(apiv1.CodeUnknownDep, field, "task %q depends on %q, which is not a task of this workflow", t.Name, dep)
				ok = false
			case seen[dep]:
				c.add(apiv1.CodeDuplicate, field, "dependency %q is listed twice", dep)
			default:
				g.AddEdge(up, i)
			}
			seen[dep] = true
		}
	}
	if _, cycle := g.Order(); cycle != nil {
		names := make([]string, len(cycle))
		for i, n := range cycle {
			names[i] = tasks[n].Name
		}
		c.add(apiv1.CodeCycle, fmt.Sprintf("%s[%d].dependsOn", base, cycle[0]), "dependency cycle: %s", strings.Join(names, " -> "))
		return nil
	}
	if !ok {
		return nil
	}
	return g
}

// joinErrs joins errs, at most apiv1.MaxOfKind of a kind (see
// apiv1.CapErrors); nil when errs is empty.
func joinErrs(errs []error) error { return errors.Join(apiv1.CapErrors(errs, nil)...) }

func minRequest(tasks []Task) resource.Request {
	if len(tasks) == 0 {
		return resource.Request{}
	}
	m := tasks[0].Least()
	for i := range tasks[1:] {
		r := tasks[i+1].Least()
		m = resource.Request{
			MilliCPU: min(m.MilliCPU, r.MilliCPU), Memory: min(m.Memory, r.Memory),
			GPU: min(m.GPU, r.GPU),
		}
	}
	return m
}
