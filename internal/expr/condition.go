package expr

import (
	"fmt"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"
)

// Condition is a compiled when: expression. It is safe for concurrent use.
type Condition struct {
	src      string
	prg      cel.Program
	params   []string
	tasks    []string
	item     bool
	workflow bool
}

// CompileCondition compiles src against env. Its errors are *Error values,
// for a condition that is too long, does not parse, names a param, task,
// task field or output parameter env does not have, indexes params, tasks or
// outputs.parameters with anything but a literal string, fails CEL's type
// check, or does not give a boolean.
func CompileCondition(src string, env Env) (*Condition, error) {
	if err := checkLen(src); err != nil {
		return nil, err
	}
	ce, err := celEnv()
	if err != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	parsed, iss := ce.Parse(src)
	if iss.Err() != nil {
		return nil, issueError(src, iss)
	}
	r := &refs{env: env, src: src, info: parsed.NativeRep().SourceInfo(), bound: map[string]int{}}
	r.walk(parsed.NativeRep().Expr())
	if r.err != nil {
		return nil, r.err
	}
	checked, iss := ce.Check(parsed)
	if iss.Err() != nil {
		return nil, issueError(src, iss)
	}
	if err := checkBool(src, checked.OutputType()); err != nil {
		return nil, err
	}
	prg, err := ce.Program(checked, cel.CostLimit(costLimit))
	if err != nil {
		return nil, fmt.Errorf("planning %q: %w", src, err)
	}
	return &Condition{src: src, prg: prg, params: r.params, tasks: r.tasks, item: r.item, workflow: r.workflow}, nil
}

// issueError turns CEL's first issue into an *Error.
func issueError(src string, iss *cel.Issues) error {
	errs := iss.Errors()
	if len(errs) == 0 {
		return &Error{Expr: src, Message: iss.String()}
	}
	line, col := place(errs[0].Location, 0)
	return &Error{Expr: src, Line: line, Column: col, Message: celMessage(errs[0].Message)}
}

// celMessage shortens CEL's messages where they speak of CEL's internals.
func celMessage(msg string) string {
	msg = strings.TrimPrefix(msg, "Syntax error: ")
	if name, ok := strings.CutPrefix(msg, "undeclared reference to '"); ok {
		name, _, _ = strings.Cut(name, "'")
		return fmt.Sprintf("unknown name %q; a condition reads params, tasks, item, itemIndex and (in onExit tasks) workflow", name)
	}
	return msg
}

// checkBool refuses a condition whose type is known and is not bool. A dyn
// one, such as item.enabled, is checked when it is evaluated.
func checkBool(src string, t *cel.Type) error {
	if t.IsExactType(cel.BoolType) || t.IsExactType(cel.DynType) {
		return nil
	}
	return &Error{Expr: src, Message: fmt.Sprintf("a condition must be a boolean; this one is of type %s", t)}
}

// Tasks returns the tasks the condition reads, in the order they first
// appear. The caller checks that they are upstream of the condition's task.
func (c *Condition) Tasks() []string { return slices.Clone(c.tasks) }

// ReadsItem reports whether the condition reads item or itemIndex: it is
// then a condition on each item of a map, not on the map.
func (c *Condition) ReadsItem() bool { return c.item }

// ReadsWorkflow reports whether the condition reads workflow: the run's
// result, known once every other task has ended.
func (c *Condition) ReadsWorkflow() bool { return c.workflow }

// String returns the condition's source.
func (c *Condition) String() string { return c.src }

// Eval evaluates the condition over d. Data for every param and task the
// condition reads must be in d. Its errors are those of evaluation: a
// conversion that fails (double("abc")), a missing key (the output of a
// task that was skipped), a result that is not a boolean, or an evaluation
// that goes over the cost limit.
func (c *Condition) Eval(d Data) (bool, error) {
	act, err := c.activation(d)
	if err != nil {
		return false, err
	}
	out, _, err := c.prg.Eval(act)
	if err != nil {
		return false, fmt.Errorf("evaluating %q: %w", c.src, err)
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("evaluating %q: the result is a %s, not a boolean", c.src, out.Type())
	}
	return b, nil
}
