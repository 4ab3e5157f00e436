package expr

import (
	"fmt"
	"slices"
)

// Depends is a compiled depends: expression, in the syntax of Argo
// Workflows' enhanced depends. It is safe for concurrent use.
//
// An operand is a task's name, which means the task succeeded or was
// skipped (as in Argo), or a name and a result:
//
//	a.Succeeded     a finished well
//	a.Failed        a finished badly
//	a.Skipped       a never ran: its condition was false, or its upstream failed
//	a.AnySucceeded  a is a map task and one of its children or more succeeded
//	a.AllFailed     a is a map task and all of its children failed
//
// Operands are joined with && and ||, negated with !, and grouped with
// parentheses; && binds tighter than ||. Argo's Errored, Daemoned and
// Omitted results mean nothing in kiln and are refused.
type Depends struct {
	src   string
	root  *dnode
	tasks []string
}

// Result is what a depends expression reads of one task.
type Result struct {
	// Phase is the task's final phase: "Succeeded", "Failed", "Skipped"
	// or "Cancelled".
	Phase string
	// AnySucceeded is true for a map task of which one child or more
	// succeeded.
	AnySucceeded bool
	// AllFailed is true for a map task all of whose children failed.
	AllFailed bool
}

// knownResults lists the results an operand may name, for errors.
const knownResults = "known results: Succeeded, Failed, Skipped, AnySucceeded, AllFailed"

// isResult reports whether an operand may name result.
func isResult(result string) bool {
	switch result {
	case "Succeeded", "Failed", "Skipped", "AnySucceeded", "AllFailed":
		return true
	}
	return false
}

// ParseDepends compiles src. known reports whether a name is a task of the
// workflow; a nil known takes every name for a task's. Its errors are
// *Error values naming the place of the problem: a syntax error, an unknown
// task, or an unknown result (listing the known ones).
func ParseDepends(src string, known func(string) bool) (*Depends, error) {
	if err := checkLen(src); err != nil {
		return nil, err
	}
	p := &dparser{src: src, known: known, at: dpos{1, 1}}
	p.next()
	root := p.or()
	if p.err == nil && p.tok.kind != tEOF {
		p.failf(p.tok.pos, "expected &&, || or the end of the expression, found %s", p.tok)
	}
	if p.err != nil {
		return nil, p.err
	}
	return &Depends{src: src, root: root, tasks: p.tasks}, nil
}

// Tasks returns the tasks the expression names, in the order they first
// appear, each once: the task's dependencies.
func (d *Depends) Tasks() []string { return slices.Clone(d.tasks) }

// String returns the expression's source.
func (d *Depends) String() string { return d.src }

// Eval evaluates the expression with result's answer for each of Tasks.
// Every one of them must have finished: a phase that is not final is an
// error.
func (d *Depends) Eval(result func(task string) Result) (bool, error) {
	got := make(map[string]Result, len(d.tasks))
	for _, t := range d.tasks {
		r := result(t)
		if !finished(r.Phase) {
			return false, fmt.Errorf("evaluating %q: task %q has not finished: its phase is %q", d.src, t, r.Phase)
		}
		got[t] = r
	}
	return d.root.eval(got), nil
}

// finished reports whether phase is one of kiln's final node phases.
func finished(phase string) bool {
	switch phase {
	case "Succeeded", "Failed", "Skipped", "Cancelled":
		return true
	}
	return false
}

// dnode is a node of a depends expression's tree: an operator with its
// operands, or a task and a result.
type dnode struct {
	op     string // "&&", "||", "!", or "" for an operand
	l, r   *dnode
	task   string
	result string // "" for Succeeded or Skipped, or one isResult accepts
}

func (n *dnode) eval(got map[string]Result) bool {
	switch n.op {
	case "&&":
		return n.l.eval(got) && n.r.eval(got)
	case "||":
		return n.l.eval(got) || n.r.eval(got)
	case "!":
		return !n.l.eval(got)
	}
	r := got[n.task]
	switch n.result {
	case "":
		return r.Phase == "Succeeded" || r.Phase == "Skipped"
	case "AnySucceeded":
		return r.AnySucceeded
	case "AllFailed":
		return r.AllFailed
	}
	return r.Phase == n.result
}
