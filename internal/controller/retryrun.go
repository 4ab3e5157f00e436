package controller

import (
	"context"
	"fmt"
	"maps"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/dag"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/who"
	"kiln.dev/kiln/internal/workflow"
)

// Retry runs a Failed or Cancelled run again from where it stopped: its
// tasks that did not succeed start afresh (with fresh retry budgets),
// Skipped and Cancelled children of maps and subworkflows included, and
// those that did keep their outputs, unless req restarts them; its exit
// handler runs again at the new end, as Argo's retry does. req.Params
// change params for what runs again. This engine works on it. Errors are
// coded: KLN-4010 for a run that did not fail or was not cancelled,
// KLN-4020 for a node that is not a top-level task, KLN-1014 for a param
// the workflow does not declare.
func (rt *Runs) Retry(ctx context.Context, id apiv1.RunID, req apiv1.RetryRequest) error {
	r := store.Retry{Owner: rt.lead.owner(), Until: rt.lead.leaseUntil(now()), Restart: []string{workflow.ExitNode}, By: who.Asks(ctx)}
	if len(req.Params) > 0 || req.RestartSuccessful || len(req.Nodes) > 0 {
		if err := rt.retryPlan(ctx, id, req, &r); err != nil {
			return err
		}
	}
	if err := rt.cfg.Store.RetryRun(ctx, id, r); err != nil {
		return runError(id, err, "only a Failed or Cancelled run can be retried")
	}
	if rt.lead.Following() {
		return nil // the leader claims it
	}
	return rt.load(ctx, id)
}

// retryRestarts is what a retry's --node names, for errors.
const retryRestarts = "a retry restarts"

// retryPlan checks req against run id's stored spec and sets, in r, the
// params it changes and the nodes it restarts: each of req.Nodes and
// every task downstream of it.
func (rt *Runs) retryPlan(ctx context.Context, id apiv1.RunID, req apiv1.RetryRequest, r *store.Retry) error {
	if req.RestartSuccessful != (len(req.Nodes) > 0) {
		return &apiv1.Error{
			Code: apiv1.CodeUsage, Object: "Run/" + string(id), Field: "nodes",
			Message: "--restart-successful and --node (restartSuccessful and nodes in the API) go together: name the tasks that run again although they succeeded",
			Hint:    "kiln retry RUN --restart-successful --node TASK",
		}
	}
	src, err := rt.cfg.Store.GetRun(ctx, id)
	if err != nil {
		return runError(id, err, "")
	}
	doc := &workflow.Document{File: "the stored spec of run " + string(id), Kind: src.Kind, Name: src.Name}
	plan, err := workflow.CompileWith(doc, src.Workflow, nil, library(doc, src.Subworkflows))
	if err != nil {
		return fmt.Errorf("compiling run %s: %w", id, err)
	}
	if len(req.Params) > 0 {
		given := maps.Clone(src.Params)
		if given == nil {
			given = map[string]string{}
		}
		maps.Copy(given, req.Params)
		if r.Params, err = workflow.ResolveParams(doc, plan.Workflow, given); err != nil {
			return err
		}
	}
	for _, name := range req.Nodes {
		k, err := topTask(plan, src, name, retryRestarts)
		if err != nil {
			return err
		}
		for i, down := range reach(plan.Graph, k, (*dag.Graph).Downstream) {
			if down {
				r.Restart = append(r.Restart, plan.Tasks[i].Spec.Name)
			}
		}
	}
	return nil
}
