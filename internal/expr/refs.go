package expr

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"cel.dev/cel-go/common"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
)

// refs walks a parsed condition, checks every param, task, field and
// output parameter it names against its Env, and collects the params and
// tasks it reads. CEL's type checker cannot do this: params, tasks and
// outputs.parameters are maps, whose keys it does not know.
type refs struct {
	env      Env
	src      string
	info     *ast.SourceInfo
	bound    map[string]int // comprehension variables in scope, which hide ours
	params   []string       // in order of first appearance, each once
	tasks    []string
	item     bool   // the condition reads item or itemIndex
	workflow bool   // the condition reads workflow
	err      *Error // the first problem found
}

// path is what a chain of selects and indexes denotes, as far as refs
// follows it.
type path int

const (
	other      path = iota // not ours, or below what refs checks
	paramsMap              // params
	tasksMap               // tasks
	taskObj                // tasks.a
	outputsObj             // tasks.a.outputs
	parameters             // tasks.a.outputs.parameters
	leaf                   // params.p, tasks.a.phase, tasks.a.outputs.parameters.p
)

// walk checks e and everything below it.
func (r *refs) walk(e ast.Expr) {
	if r.err != nil {
		return
	}
	switch p, _ := r.classify(e); p {
	case paramsMap:
		r.fail(at{e.ID(), 0}, `params must be followed by a param's name, as in params.name or params["name"]`)
	case tasksMap:
		r.fail(at{e.ID(), 0}, `tasks must be followed by a task's name, as in tasks.name or tasks["name"]`)
	case parameters:
		r.fail(at{e.ID(), 1}, "outputs.parameters must be followed by a parameter's name, as in outputs.parameters.name")
	case other:
		r.children(e)
	}
}

// children walks e's subexpressions.
func (r *refs) children(e ast.Expr) {
	switch e.Kind() {
	case ast.IdentKind:
		r.ident(e)
	case ast.SelectKind:
		r.walk(e.AsSelect().Operand())
	case ast.CallKind:
		call := e.AsCall()
		if call.IsMemberFunction() {
			r.walk(call.Target())
		}
		for _, arg := range call.Args() {
			r.walk(arg)
		}
	case ast.ListKind:
		for _, el := range e.AsList().Elements() {
			r.walk(el)
		}
	case ast.MapKind:
		for _, entry := range e.AsMap().Entries() {
			r.walk(entry.AsMapEntry().Key())
			r.walk(entry.AsMapEntry().Value())
		}
	case ast.StructKind:
		for _, field := range e.AsStruct().Fields() {
			r.walk(field.AsStructField().Value())
		}
	case ast.ComprehensionKind:
		r.comprehension(e.AsComprehension())
	}
}

// ident refuses item and itemIndex outside the children of a map task,
// and workflow outside onExit tasks.
func (r *refs) ident(e ast.Expr) {
	name := e.AsIdent()
	if r.bound[name] > 0 {
		return
	}
	if name == varWorkflow {
		if r.env.Workflow {
			r.workflow = true
			return
		}
		r.fail(at{e.ID(), 0}, "workflow (its status and failures) is read by onExit tasks only")
		return
	}
	if name != varItem && name != varItemIndex {
		return
	}
	if r.env.Item {
		r.item = true
		return
	}
	r.fail(at{e.ID(), 0}, name+" is defined only in the children of a map task")
}

// comprehension walks a macro's expansion, with its variables in scope
// where CEL puts them.
func (r *refs) comprehension(c ast.ComprehensionExpr) {
	r.walk(c.IterRange())
	r.walk(c.AccuInit())
	vars := []string{c.IterVar(), c.AccuVar()}
	if c.HasIterVar2() {
		vars = append(vars, c.IterVar2())
	}
	r.bind(vars, 1)
	r.walk(c.LoopCondition())
	r.walk(c.LoopStep())
	r.bind(vars, -1)
	r.bind([]string{c.AccuVar()}, 1)
	r.walk(c.Result())
	r.bind([]string{c.AccuVar()}, -1)
}

func (r *refs) bind(names []string, delta int) {
	for _, n := range names {
		r.bound[n] += delta
	}
}

// classify says what e denotes, checking each name along the way; it
// returns the task's name for the paths below a task.
func (r *refs) classify(e ast.Expr) (path, string) {
	switch e.Kind() {
	case ast.IdentKind:
		name := e.AsIdent()
		switch {
		case r.bound[name] > 0:
			return other, ""
		case name == varParams:
			return paramsMap, ""
		case name == varTasks:
			return tasksMap, ""
		}
	case ast.SelectKind:
		sel := e.AsSelect()
		base, taskName := r.classify(sel.Operand())
		// A select's place is its dot; the name starts one after it.
		return r.step(at{e.ID(), 1}, base, taskName, sel.FieldName())
	case ast.CallKind:
		call := e.AsCall()
		if call.FunctionName() != operators.Index || len(call.Args()) != 2 {
			return other, ""
		}
		base, taskName := r.classify(call.Args()[0])
		if base != paramsMap && base != tasksMap && base != parameters {
			return other, ""
		}
		key := call.Args()[1]
		name, ok := key.AsLiteral().(types.String)
		if key.Kind() != ast.LiteralKind || !ok {
			r.fail(at{e.ID(), 1}, `a key of params, tasks or outputs.parameters must be a literal string, as in tasks["name"]`)
			return leaf, ""
		}
		return r.step(at{key.ID(), 0}, base, taskName, string(name))
	}
	return other, ""
}

// at is a place in the source: the start of an expression, moved shift
// characters to the right.
type at struct {
	id    int64
	shift int
}

// step classifies base.name, where base is what classify said and name is
// at pos.
func (r *refs) step(pos at, base path, taskName, name string) (path, string) {
	switch base {
	case paramsMap:
		r.param(pos, name)
		return leaf, ""
	case tasksMap:
		r.task(pos, name)
		return taskObj, name
	case taskObj:
		return r.field(pos, name), taskName
	case outputsObj:
		if name != "parameters" {
			r.fail(pos, fmt.Sprintf("outputs has no field %q; output parameters are read as outputs.parameters.name", name))
		}
		return parameters, taskName
	case parameters:
		r.output(pos, taskName, name)
		return leaf, taskName
	}
	return other, ""
}

func (r *refs) param(pos at, name string) {
	if !slices.Contains(r.env.Params, name) {
		r.fail(pos, fmt.Sprintf("unknown param %q; %s%s", name, known("params", r.env.Params, "the workflow has no params"),
			dashHint(varParams, name, r.env.Params)))
		return
	}
	if !slices.Contains(r.params, name) {
		r.params = append(r.params, name)
	}
}

func (r *refs) task(pos at, name string) {
	if _, ok := r.env.Tasks[name]; !ok {
		names := slices.Collect(maps.Keys(r.env.Tasks))
		r.fail(pos, fmt.Sprintf("unknown task %q; %s%s", name, known("tasks", names, "no task can be named here"),
			dashHint(varTasks, name, names)))
		return
	}
	if !slices.Contains(r.tasks, name) {
		r.tasks = append(r.tasks, name)
	}
}

func (r *refs) field(pos at, name string) path {
	switch {
	case name == "outputs":
		return outputsObj
	case isTaskField(name):
		return leaf
	}
	r.fail(pos, fmt.Sprintf("a task has no field %q; its fields are phase, succeeded, failed, skipped, outputs", name))
	return leaf
}

func (r *refs) output(pos at, taskName, name string) {
	declared := r.env.Tasks[taskName]
	if !slices.Contains(declared, name) {
		r.fail(pos, fmt.Sprintf("task %q has no output parameter %q; %s", taskName, name,
			known("output parameters", declared, "it declares none")))
	}
}

// fail records the first problem found.
func (r *refs) fail(pos at, msg string) {
	if r.err != nil {
		return
	}
	line, col := place(r.info.GetStartLocation(pos.id), pos.shift)
	r.err = &Error{Expr: r.src, Line: line, Column: col, Message: msg}
}

// place turns CEL's location, with a column from 0, into a line and a
// column from 1, moved shift characters to the right; or 0, 0 where CEL
// does not know the place.
func place(loc common.Location, shift int) (line, col int) {
	if loc.Line() < 1 || loc.Column() < 0 {
		return 0, 0
	}
	return loc.Line(), loc.Column() + 1 + shift
}

// known says "known <what>: a, b", sorted, or none when there are none.
func known(what string, names []string, none string) string {
	if len(names) == 0 {
		return none
	}
	return "known " + what + ": " + strings.Join(slices.Sorted(slices.Values(names)), ", ")
}

// dashHint explains, when name is the start of a known name with a dash,
// that CEL read the dash as a minus.
func dashHint(variable, name string, names []string) string {
	for _, n := range slices.Sorted(slices.Values(names)) {
		if strings.HasPrefix(n, name+"-") {
			return fmt.Sprintf(`; a name with dashes is written %s["%s"]`, variable, n)
		}
	}
	return ""
}
