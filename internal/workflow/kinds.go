package workflow

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// MaxItems bounds the items of one map task.
const MaxItems = 20_000

// ExitNode is the name of the node that runs a workflow's onExit tasks.
// It is not a DNS-1123 label, so no task of a workflow can have it.
const ExitNode = "onExit"

// Map is a map task's forEach, compiled.
type Map struct {
	// Items are the literal items (a range's numbers included); nil when
	// the list comes From a template, at run time.
	Items []json.RawMessage
	// From is a template whose value is a JSON list.
	From string
	// MaxParallel caps the items running at once; 0 means no cap.
	MaxParallel int
	// MinSuccesses and MinRatio: see Need.
	MinSuccesses int
	MinRatio     float64
	// Child is the task each item runs: the map task itself, as a command
	// or a training job.
	Child Task
}

// Need is how many of total items must succeed.
func (m *Map) Need(total int) int {
	switch {
	case m.MinSuccesses > 0:
		return min(m.MinSuccesses, total)
	case m.MinRatio > 0:
		return int(math.Ceil(m.MinRatio*float64(total) - 1e-9))
	}
	return total
}

// Sub is a subworkflow task's workflow, compiled, and the params it is given.
type Sub struct {
	Name   string
	Plan   *Plan
	Params []apiv1.ParamValue
}

// Gate is a gate task, compiled.
type Gate struct {
	// Kind is approve, sleep or signal.
	Kind string
	// Sleep is a sleep's duration; Until its time, as a template.
	Sleep time.Duration
	Until string
	// Timeout bounds the wait; 0 means none. OnTimeout says what it does.
	Timeout   time.Duration
	OnTimeout apiv1.GateTimeoutAction
	// Message, Type and Default are an approval's or a signal's.
	Message string
	Type    string
	Default *string
}

// Sensor is a sensor task, compiled.
type Sensor struct {
	// Path is the file it waits for, as a template.
	Path string
	// Poll is how often it looks; Timeout bounds the wait (0: none), and
	// OnTimeout says what a timeout does (fail or skip).
	Poll, Timeout time.Duration
	OnTimeout     apiv1.GateTimeoutAction
}

// DefaultSensorPoll is how often a sensor looks when it does not say.
const DefaultSensorPoll = 5 * time.Second

// The kinds of gate.
const (
	GateApprove = "approve"
	GateSleep   = "sleep"
	GateSignal  = "signal"
)

// SignalTypes are the types a signal's value may have.
var SignalTypes = []string{"string", "int", "float", "bool", "json"}

// kind decides a task's kind from the fields it sets, and compiles those
// of a map, dynamic, subworkflow or gate task. Exactly one of command,
// train, workflow and gate says what the task runs; forEach and dynamic
// go with a command or a training job.
func (c *checker) kind(field string, t *apiv1.Task, out *Task) {
	runs := 0
	for _, set := range []bool{len(t.Command) > 0 || t.Train != nil, t.Workflow != nil, t.Gate != nil, t.Sensor != nil} {
		if set {
			runs++
		}
	}
	if runs > 1 {
		c.add(apiv1.CodeInvalidValue, field, "task %q sets more than one of command (or train), workflow, gate and sensor: set one", t.Name)
	}
	switch {
	case t.Gate != nil:
		out.Kind = apiv1.NodeKindGate
		out.Gate = c.gate(field+".gate", t.Gate)
	case t.Sensor != nil:
		out.Kind = apiv1.NodeKindSensor
		out.Sensor = c.sensor(field+".sensor", t.Sensor)
	case t.Workflow != nil:
		out.Kind = apiv1.NodeKindSubworkflow
		out.Sub = &Sub{Name: t.Workflow.Name, Params: t.Workflow.Params}
		if t.Workflow.Name == "" {
			c.add(apiv1.CodeRequired, field+".workflow.name", "name is required: the name of a Workflow in the same files")
		}
	case t.Dynamic != nil:
		out.Kind = apiv1.NodeKindDynamic
		c.dynamic(field, t, out)
	}
	c.cache(field, t, out)
	if t.ForEach != nil {
		c.forEach(field, t, out)
	}
	if t.ForEach != nil && (t.Dynamic != nil || t.Gate != nil || t.Sensor != nil) {
		c.add(apiv1.CodeInvalidValue, field+".forEach", "forEach maps a command, a training job or a workflow; it cannot go with dynamic, gate or sensor")
	}
	mapsWorkflow := out.Map != nil && out.Map.Child.Kind == apiv1.NodeKindSubworkflow
	if out.Kind == apiv1.NodeKindGate || out.Kind == apiv1.NodeKindSubworkflow || out.Kind == apiv1.NodeKindSensor || mapsWorkflow {
		c.noAttemptFields(field, t)
	}
}

// noAttemptFields refuses what only a task that runs processes can use.
func (c *checker) noAttemptFields(field string, t *apiv1.Task) {
	// A list, not a map: the problems come in the same order every time.
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"retries", t.Retries != nil},
		{"resources", t.Resources != nil},
		{"admissionTimeout", t.AdmissionTimeout != ""},
		{"timeout", t.Timeout != ""},
		{"env", len(t.Env) > 0},
		{"args", len(t.Args) > 0},
		{"workingDir", t.WorkingDir != ""},
		{"outputs", t.Outputs != nil},
		{"image", t.Image != ""},
		{"podTemplate", t.PodTemplate != nil},
	} {
		if f.set {
			c.addHint(apiv1.CodeInvalidValue, field+"."+f.name, "a gate or subworkflow task runs no process of its own; put the field on the tasks that do",
				"%s does not apply to a task that runs no process", f.name)
		}
	}
}

func (c *checker) dynamic(field string, t *apiv1.Task, out *Task) {
	f := field + ".dynamic.output"
	switch {
	case t.Dynamic.Output == "":
		c.add(apiv1.CodeRequired, f, "output is required: the output parameter the command writes its fragment to")
	case !declares(t.Outputs, t.Dynamic.Output):
		c.addHint(apiv1.CodeInvalidValue, f, "declare it under outputs.parameters",
			"the task declares no output parameter %q", t.Dynamic.Output)
	}
	if t.Train != nil {
		c.add(apiv1.CodeInvalidValue, field+".dynamic", "a dynamic task runs a command; a training job cannot write a fragment")
	}
	for k, name := range t.Dynamic.Workflows {
		if name == "" {
			c.add(apiv1.CodeRequired, fmt.Sprintf("%s.dynamic.workflows[%d]", field, k), "name a Workflow of the files or a stored WorkflowTemplate")
			continue
		}
		out.Declared = append(out.Declared, &Sub{Name: name})
	}
}

func declares(o *apiv1.Outputs, name string) bool {
	for _, p := range o.Params() {
		if p == name {
			return true
		}
	}
	return false
}

func (c *checker) forEach(field string, t *apiv1.Task, out *Task) {
	f := field + ".forEach"
	fe := t.ForEach
	sources := 0
	for _, set := range []bool{fe.Items != nil, fe.Range != nil, fe.From != ""} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		c.add(apiv1.CodeInvalidValue, f, "set exactly one of items, range and from")
	}
	m := &Map{Items: fe.Items, From: fe.From, MaxParallel: fe.MaxParallel, MinSuccesses: fe.MinSuccesses, Child: *out}
	if fe.From != "" && !hasTemplate(fe.From) {
		c.addHint(apiv1.CodeInvalidValue, f+".from", "for a literal list use items: [...]",
			"from is %s: it is a template whose value is a JSON list, such as {{tasks.list.outputs.parameters.files}}", QuoteStart(fe.From))
	}
	if len(fe.Items) > MaxItems {
		c.add(apiv1.CodeOutOfRange, f+".items", "%d items, out of range: a map runs at most %d", len(fe.Items), MaxItems)
	}
	if fe.Range != nil {
		m.Items = c.rangeItems(f+".range", fe.Range)
	}
	if fe.MaxParallel < 0 || fe.MaxParallel > MaxItems {
		c.add(apiv1.CodeOutOfRange, f+".maxParallel", "maxParallel is %d, out of range: it lies from 0 (no cap) to %d", fe.MaxParallel, MaxItems)
	}
	if fe.MinSuccesses < 0 || fe.MinSuccesses > MaxItems {
		c.add(apiv1.CodeOutOfRange, f+".minSuccesses", "minSuccesses is %d, out of range: it lies from 0 (all) to %d", fe.MinSuccesses, MaxItems)
	}
	if r := fe.MinSuccessRatio; r != nil {
		if !(*r > 0 && *r <= 1) {
			c.add(apiv1.CodeOutOfRange, f+".minSuccessRatio", "minSuccessRatio is %v, out of range: it lies above 0, up to 1", *r)
		} else if fe.MinSuccesses > 0 {
			c.add(apiv1.CodeInvalidValue, f, "set at most one of minSuccesses and minSuccessRatio")
		} else {
			m.MinRatio = *r
		}
	}
	if fe.MinSuccesses > 0 && m.Items != nil && fe.MinSuccesses > len(m.Items) {
		c.add(apiv1.CodeOutOfRange, f+".minSuccesses", "minSuccesses is %d, but the map has %d items", fe.MinSuccesses, len(m.Items))
	}
	out.Map = m
	out.Kind = apiv1.NodeKindMap
}

// rangeItems lists a range's numbers.
func (c *checker) rangeItems(field string, r *apiv1.Range) []json.RawMessage {
	step := r.Step
	n := 0
	switch {
	case (r.End == nil) == (r.Count == nil):
		c.add(apiv1.CodeInvalidValue, field, "set exactly one of end and count")
		return nil
	case r.Count != nil:
		n = *r.Count
		if step == 0 {
			step = 1
		}
	default:
		if step == 0 {
			step = 1
			if *r.End < r.Start {
				step = -1
			}
		}
		if (*r.End-r.Start)/step >= 0 {
			n = (*r.End-r.Start)/step + 1
		}
	}
	if n < 0 || n > MaxItems || step > maxRangeStep || step < -maxRangeStep || abs(r.Start) > maxRangeStep {
		c.add(apiv1.CodeOutOfRange, field, "the range has %d numbers (step %d), out of range: a map runs from 0 to %d items, and numbers lie within ±%d", n, step, MaxItems, maxRangeStep)
		return nil
	}
	items := make([]json.RawMessage, n)
	for i := range items {
		items[i] = json.RawMessage(strconv.Itoa(r.Start + i*step))
	}
	return items
}

// maxRangeStep bounds a range's start and step, so no number overflows.
const maxRangeStep = 1_000_000_000

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func (c *checker) gate(field string, g *apiv1.Gate) *Gate {
	out := &Gate{Timeout: c.duration(field+".timeout", g.Timeout), OnTimeout: g.OnTimeout}
	kinds := 0
	if g.Approve != nil {
		kinds++
		out.Kind, out.Message = GateApprove, g.Approve.Message
	}
	if g.Sleep != nil {
		kinds++
		out.Kind = GateSleep
		c.sleep(field+".sleep", g.Sleep, out)
	}
	if g.Signal != nil {
		kinds++
		out.Kind, out.Message, out.Type, out.Default = GateSignal, g.Signal.Message, g.Signal.Type, g.Signal.Default
		c.signal(field+".signal", g.Signal, out)
	}
	if kinds != 1 {
		c.add(apiv1.CodeInvalidValue, field, "set exactly one of approve, sleep and signal")
	}
	switch g.OnTimeout {
	case "":
		out.OnTimeout = apiv1.GateTimeoutFail
	case apiv1.GateTimeoutFail, apiv1.GateTimeoutSucceed, apiv1.GateTimeoutSkip:
	default:
		c.add(apiv1.CodeInvalidValue, field+".onTimeout", "onTimeout is %q; it is one of fail, succeed and skip", g.OnTimeout)
	}
	if g.OnTimeout != "" && g.Timeout == "" {
		c.add(apiv1.CodeRequired, field+".timeout", "onTimeout is set but timeout is not: set how long the gate waits")
	}
	if g.Signal != nil && g.OnTimeout == apiv1.GateTimeoutSucceed && g.Signal.Default == nil {
		c.add(apiv1.CodeRequired, field+".signal.default", "onTimeout: succeed needs a default value for the signal")
	}
	return out
}

func (c *checker) sleep(field string, s *apiv1.SleepGate, out *Gate) {
	if (s.Duration == "") == (s.Until == "") {
		c.add(apiv1.CodeInvalidValue, field, "set exactly one of duration and until")
	}
	out.Sleep = c.duration(field+".duration", s.Duration)
	out.Until = s.Until
	if s.Until != "" && !hasTemplate(s.Until) {
		if _, err := time.Parse(time.RFC3339, s.Until); err != nil {
			c.add(apiv1.CodeInvalidValue, field+".until", "%q is not an RFC 3339 time such as 2026-11-23T18:00:00Z", s.Until)
		}
	}
}

func (c *checker) signal(field string, s *apiv1.SignalGate, out *Gate) {
	if s.Type == "" {
		out.Type = "string"
	}
	known := false
	for _, t := range SignalTypes {
		known = known || t == out.Type
	}
	if !known {
		c.add(apiv1.CodeInvalidValue, field+".type", "type is %q; it is one of %s", s.Type, strings.Join(SignalTypes, ", "))
		return
	}
	if s.Default != nil {
		if err := CheckValue(out.Type, *s.Default); err != nil {
			c.add(apiv1.CodeInvalidValue, field+".default", "%v", err)
		}
	}
}

// CheckValue checks that v, as text, is a value of a signal's type.
func CheckValue(typ, v string) error {
	var ok bool
	switch typ {
	case "", "string":
		return nil
	case "int":
		_, err := strconv.ParseInt(v, 10, 64)
		ok = err == nil
	case "float":
		f, err := strconv.ParseFloat(v, 64)
		ok = err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	case "bool":
		_, err := strconv.ParseBool(v)
		ok = err == nil
	case "json":
		ok = json.Valid([]byte(v))
	default:
		return fmt.Errorf("the type %q is not one of %s", typ, strings.Join(SignalTypes, ", "))
	}
	if ok {
		return nil
	}
	return fmt.Errorf("the value %s is not %s", QuoteStart(v), typeHint[typ])
}

// typeHint says what a value of each type looks like.
var typeHint = map[string]string{
	"int":   "an int (a whole number such as 42 or -7)",
	"float": "a float (a finite number such as 0.5 or 1e-3)",
	"bool":  "a bool (true or false)",
	"json":  "json (a JSON document such as {\"lr\": 0.1} or [1, 2])",
}

// QuoteStart quotes v's first 64 bytes, marking a cut with "...".
func QuoteStart(v string) string {
	if len(v) > 64 {
		return strconv.Quote(v[:64]) + "..."
	}
	return strconv.Quote(v)
}

func hasTemplate(s string) bool { return strings.Contains(s, "{{") }

// Outputs are what the task gives downstream: a subworkflow its
// workflow's outputs, a signal gate "value", an approval gate "approved",
// any other task what it declares.
func (t *Task) Outputs() *apiv1.Outputs {
	switch {
	case t.Sub != nil && t.Sub.Plan != nil:
		return t.Sub.Plan.DeclaredOutputs()
	case t.Gate != nil && t.Gate.Kind == GateSignal:
		return &apiv1.Outputs{Parameters: []apiv1.OutputParameter{{Name: "value"}}}
	case t.Gate != nil && t.Gate.Kind == GateApprove:
		return &apiv1.Outputs{Parameters: []apiv1.OutputParameter{{Name: "approved"}}}
	case t.Sensor != nil:
		return &apiv1.Outputs{Parameters: []apiv1.OutputParameter{{Name: "path"}}}
	}
	return t.Spec.Outputs
}

// sensor compiles a sensor task: a file's path, a poll of at least 100ms
// (default 5s), an optional timeout that fails or skips the task.
func (c *checker) sensor(field string, s *apiv1.Sensor) *Sensor {
	out := &Sensor{Poll: DefaultSensorPoll, Timeout: c.duration(field+".timeout", s.Timeout), OnTimeout: s.OnTimeout}
	if s.Poll != "" {
		out.Poll = c.duration(field+".poll", s.Poll)
		if out.Poll > 0 && out.Poll < 100*time.Millisecond {
			c.add(apiv1.CodeOutOfRange, field+".poll", "poll %s is too short: at least 100ms", s.Poll)
		}
	}
	switch {
	case s.File == nil:
		c.add(apiv1.CodeRequired, field+".file", "a sensor needs what it waits for: file: {path: /abs/path}")
	case s.File.Path == "":
		c.add(apiv1.CodeRequired, field+".file.path", "path is required: the absolute path of the file to wait for")
	case !hasTemplate(s.File.Path) && !filepath.IsAbs(s.File.Path):
		c.add(apiv1.CodeInvalidValue, field+".file.path", "path %q is not absolute: the sensor looks on the engine's machine, which has no working directory of the task's", s.File.Path)
	default:
		out.Path = s.File.Path
	}
	switch s.OnTimeout {
	case "":
		out.OnTimeout = apiv1.GateTimeoutFail
	case apiv1.GateTimeoutFail, apiv1.GateTimeoutSkip:
	default:
		c.add(apiv1.CodeInvalidValue, field+".onTimeout", "onTimeout %q is not fail or skip", s.OnTimeout)
	}
	return out
}
