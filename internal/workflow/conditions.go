package workflow

import (
	"fmt"
	"slices"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/dag"
	"kiln.dev/kiln/internal/expr"
)

// dependsTasks compiles each task's depends expression and returns, per
// task, the tasks it depends on: dependsOn, or the names depends reads.
func (c *checker) dependsTasks(base string, tasks []apiv1.Task, p *Plan) [][]string {
	deps := make([][]string, len(tasks))
	known := func(name string) bool { _, ok := p.Index[name]; return ok }
	for i := range tasks {
		t := &tasks[i]
		deps[i] = t.DependsOn
		if t.Depends == "" {
			continue
		}
		d, err := expr.ParseDepends(t.Depends, known)
		if err != nil {
			c.addHint(apiv1.CodeExpression, fmt.Sprintf("%s[%d].depends", base, i),
				"depends names upstream tasks, with an optional result, joined by &&, || and !: a && (b.Failed || c.Skipped)",
				"%q: %v", t.Depends, err)
			continue
		}
		p.Tasks[i].Depends = d
		deps[i] = d.Tasks()
	}
	return deps
}

// conditions compiles each task's when expression against the plan's
// params and tasks; the tasks it reads must be upstream of it. An onExit
// task's condition also reads the run's result (workflow) and the tasks
// of the workflow it ends, which have all ended when it starts; where an
// onExit task has the name of one of those, the name is the onExit task's.
func (c *checker) conditions(base string, tasks []apiv1.Task, p *Plan, params map[string]bool) {
	if !slices.ContainsFunc(tasks, func(t apiv1.Task) bool { return t.When != "" }) {
		return // most workflows: no need to list every task's outputs
	}
	env := expr.Env{Tasks: map[string][]string{}, Workflow: c.inExit}
	for name := range params {
		env.Params = append(env.Params, name)
	}
	if c.exitMain != nil {
		for i := range c.exitMain.Tasks {
			env.Tasks[c.exitMain.Tasks[i].Spec.Name] = c.exitMain.Tasks[i].Outputs().Params()
		}
	}
	for i := range p.Tasks {
		env.Tasks[p.Tasks[i].Spec.Name] = p.Tasks[i].Outputs().Params()
	}
	for i := range tasks {
		t := &tasks[i]
		if t.When == "" {
			continue
		}
		field := fmt.Sprintf("%s[%d].when", base, i)
		env.Item = t.ForEach != nil
		cond, err := expr.CompileCondition(t.When, env)
		if err != nil {
			c.exprError(field, t.When, err)
			continue
		}
		if m := p.Tasks[i].Map; m != nil && cond.ReadsItem() {
			m.Child.When = cond // a condition on each item, as Argo's when with withItems
		} else {
			p.Tasks[i].When = cond
		}
		c.upstream(field, t.Name, cond.Tasks(), i, p.Index, p.Graph)
	}
}

// upstream checks that every task a condition reads is upstream of task i.
func (c *checker) upstream(field, name string, reads []string, i int, index map[string]int, g *dag.Graph) {
	if g == nil {
		return
	}
	for _, r := range reads {
		if up, ok := index[r]; ok && !g.IsAncestor(up, i) {
			c.addHint(apiv1.CodeExpression, field, "add the task to dependsOn",
				"the condition reads task %q, which task %q does not depend on: it may not have run", r, name)
		}
	}
}

// exprError reports a condition's error, quoting the condition. A type
// error gets a hint: params and outputs are strings.
func (c *checker) exprError(field, src string, err error) {
	if strings.Contains(err.Error(), "no matching overload") {
		c.addHint(apiv1.CodeExpression, field, `params and output parameters are strings: convert them, as in int(params.epochs) > 3 or double(tasks.eval.outputs.parameters.acc) >= 0.9`,
			"%q: %v", src, err)
		return
	}
	c.add(apiv1.CodeExpression, field, "%q: %v", src, err)
}
