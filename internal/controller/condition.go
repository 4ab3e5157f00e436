package controller

import (
	"bytes"
	"encoding/json"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/expr"
)

// depends applies node i's depends expression once every upstream node
// has ended.
func (rs *runState) depends(i int, ups []int) (met, final bool, code apiv1.Code, why string) {
	for _, u := range ups {
		if !rs.nodes[u].status.Phase.Done() {
			return false, false, "", ""
		}
	}
	d := rs.plan.Tasks[i].Depends
	ok, err := d.Eval(func(task string) expr.Result { return rs.result(i, task) })
	switch {
	case err != nil:
		return false, true, apiv1.CodeTriggerRule, fmt.Sprintf("not started: depends %q: %v", d.String(), err)
	case !ok:
		return false, true, apiv1.CodeTriggerRule, fmt.Sprintf("not started: depends %q is false (%s)", d.String(), rs.upstreamPhases(ups))
	}
	return true, true, "", ""
}

// result is how task, named in node i's scope, ended, for a depends expression.
func (rs *runState) result(i int, task string) expr.Result {
	u, ok := rs.plan.Index[rs.prefix(i)+task]
	if !ok {
		return expr.Result{}
	}
	st := rs.nodes[u].status
	res := expr.Result{Phase: string(st.Phase)}
	if c := st.Children; c != nil {
		res.AnySucceeded = c.Succeeded > 0
		res.AllFailed = c.Total > 0 && c.Failed == c.Total
	}
	return res
}

// prefix is what names in node i's scope are prefixed with.
func (rs *runState) prefix(i int) string {
	if sc := rs.scopes[i]; sc != nil {
		return sc.prefix
	}
	return ""
}

// condition evaluates node i's when expression: a false one skips the
// node, one that cannot be evaluated fails it (KLN-3014). It reports
// whether the node may start.
func (r *round) condition(i int) bool {
	rs := r.rs
	cond := rs.plan.Tasks[i].When
	if cond == nil {
		return true
	}
	ok, err := cond.Eval(rs.conditionData(i, cond))
	switch {
	case err != nil:
		r.failNode(i, apiv1.CodeCondition, err.Error())
		return false
	case !ok:
		if g := rs.groups[rs.parent[i]]; g != nil {
			g.counts.SkippedByCondition++
		}
		r.setNode(i, apiv1.PhaseSkipped, "ConditionFalse", "", fmt.Sprintf("not started: its condition %q is false", cond.String()))
		return false
	}
	return true
}

// conditionData is what node i's condition reads: its scope's params,
// the tasks it names, its item, and the run's result.
func (rs *runState) conditionData(i int, cond *expr.Condition) expr.Data {
	d := expr.Data{Params: rs.run.Params, Tasks: map[string]expr.TaskData{}}
	sc := rs.scopes[i]
	if sc != nil && sc.params != nil {
		d.Params = sc.params
	}
	for _, name := range cond.Tasks() {
		if u, ok := rs.taskNamed(i, name); ok {
			st := rs.nodes[u].status
			d.Tasks[name] = expr.TaskData{Phase: string(st.Phase), Outputs: st.Outputs}
		}
	}
	if cond.ReadsWorkflow() {
		d.Workflow = expr.WorkflowData{Status: rs.resultSoFar(), Failures: rs.failures()}
	}
	if sc != nil && sc.item != nil {
		dec := json.NewDecoder(bytes.NewReader(sc.item))
		dec.UseNumber()
		var item any
		if dec.Decode(&item) == nil {
			d.Item, d.ItemIndex = numbers(item), sc.index
		}
	}
	return d
}

// taskNamed finds the node that name means to node i: a task of its own
// scope, else of its group's (an onExit task reads the tasks of the
// workflow it ends).
func (rs *runState) taskNamed(i int, name string) (int, bool) {
	if u, ok := rs.plan.Index[rs.prefix(i)+name]; ok {
		return u, true
	}
	if p := rs.parent[i]; p >= 0 {
		u, ok := rs.plan.Index[rs.prefix(p)+name]
		return u, ok
	}
	return 0, false
}

// numbers turns the JSON numbers in v into int64 when they are whole, so
// that a condition may write item % 2, and float64 otherwise.
func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n
		}
		f, _ := v.Float64()
		return f
	case []any:
		for i := range v {
			v[i] = numbers(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = numbers(v[k])
		}
	}
	return v
}

// resultSoFar is the run's result as its onExit tasks see it: Failed once
// a task failed or the run is being stopped, else Succeeded.
func (rs *runState) resultSoFar() string {
	if len(rs.failed) > 0 || rs.stopping != "" {
		return string(apiv1.PhaseFailed)
	}
	return string(apiv1.PhaseSucceeded)
}

// failures are the run's top-level tasks that failed, in the order they did.
func (rs *runState) failures() []expr.FailureData {
	out := make([]expr.FailureData, 0, len(rs.failed))
	for _, name := range rs.failed {
		st := rs.nodes[rs.plan.Index[name]].status
		out = append(out, expr.FailureData{Name: st.Name, Phase: string(st.Phase), Code: string(st.Code), Message: st.Message})
	}
	return out
}
