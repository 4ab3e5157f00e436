package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/node"
)

// SendGateInput records an approval, a rejection or a signal for node of
// run id, after checking that the node is a gate waiting for it, and wakes
// the run if this engine owns it; the engine that owns it otherwise reads
// it from the store. in.At is set to now if zero; in.By is kept as given.
//
// Refusals are coded: KLN-4001 for an unknown run, KLN-4010 for one that
// ended, KLN-4014 for a node that is not a gate waiting for this input or
// a value that does not parse as the gate's type, KLN-1023 for a value
// over 64 KiB.
func (rt *Runs) SendGateInput(ctx context.Context, id apiv1.RunID, node string, in apiv1.GateInput) error {
	const rule = "only a run that has not ended takes approvals and signals"
	run, err := rt.cfg.Store.GetRun(ctx, id)
	if err != nil {
		return runError(id, err, rule)
	}
	if run.Status.Phase.Done() {
		return &apiv1.Error{Code: apiv1.CodeRunPhase, Object: "Run/" + string(id), Message: fmt.Sprintf("the run is %s; %s", run.Status.Phase, rule)}
	}
	if err := rt.inputTarget(run, node, in); err != nil {
		return err
	}
	if err := rt.notDecidedYet(ctx, run, node); err != nil {
		return err
	}
	if in.At.IsZero() {
		in.At = now()
	}
	if err := rt.cfg.Store.AddGateInput(ctx, id, node, in); err != nil {
		return runError(id, err, rule)
	}
	if rt.get(id) != nil {
		rt.enqueue(id)
	}
	return nil
}

// inputTarget checks that node of run is a gate waiting for in.
func (rt *Runs) inputTarget(run *apiv1.Run, task string, in apiv1.GateInput) error {
	n := run.Status.Node(task)
	if n == nil {
		return inputRefused(run.ID, fmt.Sprintf("the run has no task %q; %s", task, inputGateList(run)))
	}
	if n.Gate == nil {
		return inputRefused(run.ID, fmt.Sprintf("task %s is %s, not a gate; %s", task, inputNodeKind(n), inputGateList(run)))
	}
	if n.Phase != apiv1.PhaseRunning && n.Gate.Decision == "" {
		return inputRefused(run.ID, fmt.Sprintf("task %s is a gate (%s) in phase %s, not waiting", task, n.Gate.Kind, n.Phase))
	}
	h, err := rt.cfg.Handlers.For(n.Kind)
	w, ok := h.(node.Waiter)
	if err != nil || !ok {
		return inputRefused(run.ID, fmt.Sprintf("task %s is %s, not a gate; %s", task, inputNodeKind(n), inputGateList(run)))
	}
	err = w.Accepts(n.Gate, in)
	var e *apiv1.Error
	if errors.As(err, &e) {
		e.Object, e.Message = "Run/"+string(run.ID), "task "+task+": "+e.Message
	}
	return err
}

// inputNodeKind says what task n is: "a command task in phase Running",
// or without a recorded kind "a task in phase Running".
func inputNodeKind(n *apiv1.NodeStatus) string {
	if n.Kind == "" {
		return "a task in phase " + string(n.Phase)
	}
	return fmt.Sprintf("a %s task in phase %s", n.Kind, n.Phase)
}

// inputGateList names the run's gate tasks: those its workflow declares and
// those its nodes say are gates (children of maps and fragments).
func inputGateList(run *apiv1.Run) string {
	var names []string
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	if run.Workflow != nil {
		for _, t := range slices.Concat(run.Workflow.Spec.Tasks, run.Workflow.Spec.OnExit) {
			if t.Gate != nil {
				add(t.Name)
			}
		}
	}
	for _, n := range run.Status.Nodes {
		if n.Gate != nil {
			add(n.Name)
		}
	}
	if len(names) == 0 {
		return "the run has no gate tasks"
	}
	return "its gate tasks are " + strings.Join(names, ", ")
}

func inputRefused(id apiv1.RunID, msg string) error {
	return &apiv1.Error{Code: apiv1.CodeNotWaiting, Object: "Run/" + string(id), Message: msg}
}

// notDecidedYet refuses an input to a gate that already has one its
// engine has not applied yet: the first decides, and a second sender must
// not be told theirs took effect.
func (rt *Runs) notDecidedYet(ctx context.Context, run *apiv1.Run, task string) error {
	n := run.Status.Node(task)
	rows, err := rt.cfg.Store.GateInputs(ctx, run.ID)
	if err != nil {
		return err
	}
	for _, row := range rows {
		if row.Node == task && sentDuring(n.Gate, &row.GateInput) {
			return inputRefused(run.ID, fmt.Sprintf("task %s: the gate was already %s by %s at %s; its engine applies that first",
				task, sentAs(row.GateInput), row.By, row.At.UTC().Format(time.RFC3339)))
		}
	}
	return nil
}

// sentAs says what an input was, as a past participle.
func sentAs(in apiv1.GateInput) string {
	switch {
	case in.Value != nil:
		return fmt.Sprintf("sent %q", *in.Value)
	case in.Approve != nil && *in.Approve:
		return "approved"
	}
	return "rejected"
}
