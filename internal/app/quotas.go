package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/local"
	"kiln.dev/kiln/internal/controller"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/workflow"
)

// QuotaRefresh is how often the running engine reads the stored quotas
// again and gives them to its pool: a quota applied anywhere (another
// replica, kiln apply without a server) counts within this.
const QuotaRefresh = 2 * time.Second

// quotasApplied wakes the quota refresh of the engine in this process
// when a quota was stored here; the refresh closes the channel it is
// sent once the engine has the quotas, so the quota holds for a run
// submitted right after where the leader is this process.
var quotasApplied = make(chan chan struct{})

// quotaHandOff is how long a process whose engine does not refresh
// quotas (a follower, a command) waits for one to take a wake.
const quotaHandOff = 100 * time.Millisecond

// quotaRepeat is how many refreshes pass before unchanged quotas are
// given to the engine again.
const quotaRepeat = 15

// ListQuotas returns every project's stored quota.
func (a *App) ListQuotas(ctx context.Context) ([]apiv1.ProjectQuota, error) {
	return a.Store.ListQuotas(ctx)
}

// DeleteQuota removes a project's stored quota; the engine drops it
// within QuotaRefresh (at once where it runs in this process). Only a
// sender who may write every project may call it: the server checks.
func (a *App) DeleteQuota(ctx context.Context, project string) error {
	err := a.Store.DeleteQuota(ctx, project)
	if errors.Is(err, store.ErrNotFound) {
		return &apiv1.Error{
			Code: apiv1.CodeNoQuota, Object: apiv1.KindProjectQuota + "/" + project,
			Message: fmt.Sprintf("project %q has no quota", project),
		}
	}
	if err == nil {
		wakeQuotaRefresh(ctx)
	}
	return err
}

// wakeQuotaRefresh has the engine of this process read the quotas now,
// and waits until it has them (at most QuotaRefresh). Where no engine
// here refreshes quotas, it gives up after quotaHandOff: the leader
// reads them within QuotaRefresh.
func wakeQuotaRefresh(ctx context.Context) {
	done := make(chan struct{})
	select {
	case quotasApplied <- done:
	case <-time.After(quotaHandOff):
		return
	case <-ctx.Done():
		return
	}
	select {
	case <-done:
	case <-time.After(QuotaRefresh):
	case <-ctx.Done():
	}
}

// refreshQuotas gives the engine the stored quotas now and every
// QuotaRefresh until ctx ends, and at once when woken. It runs beside
// the engine, on the leader.
func (a *App) refreshQuotas(ctx context.Context) {
	t := time.NewTicker(QuotaRefresh)
	defer t.Stop()
	var last string
	var woken chan struct{}
	for tick := 0; ; tick++ {
		if qs, err := a.Store.ListQuotas(ctx); err == nil {
			// Unchanged quotas are given again now and then: a supervisor
			// that restarted has forgotten them.
			key, _ := json.Marshal(qs)
			if string(key) != last || tick%quotaRepeat == 0 {
				if err := a.Controller.SetQuotas(ctx, qs); err != nil && ctx.Err() == nil {
					a.Controller.Logger().Warn("giving the projects' quotas to the engine", "err", err)
				}
				last = string(key) // after an error, tried again with the next repeat
			}
		}
		if woken != nil {
			close(woken)
			woken = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case woken = <-quotasApplied:
		}
	}
}

// SplitQuotas takes the ProjectQuota documents out of docs, as kiln
// apply reads them: it returns them checked, and the rest.
func SplitQuotas(docs []workflow.Document) (quotas []apiv1.ProjectQuota, rest []workflow.Document, err error) {
	var errs []error
	seen := map[string]bool{}
	for i := range docs {
		d := &docs[i]
		if d.Kind != apiv1.KindProjectQuota {
			rest = append(rest, *d)
			continue
		}
		q, err := checkQuota(d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[q.Metadata.Name] {
			errs = append(errs, quotaError(d, apiv1.CodeDuplicate, "metadata.name", fmt.Sprintf("the quota of project %q is in the files twice", q.Metadata.Name)))
			continue
		}
		seen[q.Metadata.Name] = true
		quotas = append(quotas, *q)
	}
	return quotas, rest, workflow.AsWritten(docs, errors.Join(errs...))
}

// checkQuota reads and checks one ProjectQuota document.
func checkQuota(d *workflow.Document) (*apiv1.ProjectQuota, error) {
	decoded, err := workflow.DecodeProjectQuota(d)
	if err != nil {
		return nil, err // each problem at its field, as in every kind
	}
	q := *decoded
	if q.APIVersion != apiv1.APIVersion {
		return nil, quotaError(d, apiv1.CodeQuotaSpec, "apiVersion", fmt.Sprintf("apiVersion %q is not %s", q.APIVersion, apiv1.APIVersion))
	}
	if q.Metadata.Name == "" || strings.ContainsAny(q.Metadata.Name, "/ \t\n") {
		return nil, quotaError(d, apiv1.CodeQuotaSpec, "metadata.name", "metadata.name must name the project the quota is for, without spaces or /")
	}
	q.Status = apiv1.ProjectQuotaStatus{}
	if _, err := resource.QuotaOf(q.Spec); err != nil {
		for _, e := range apiv1.Errors(err) {
			e.File, e.Object = d.File, apiv1.KindProjectQuota+"/"+q.Metadata.Name
		}
		return nil, err
	}
	return &q, nil
}

func quotaError(d *workflow.Document, code apiv1.Code, field, msg string) *apiv1.Error {
	return &apiv1.Error{
		Code: code, File: d.File, Object: d.Object(), Field: field, Message: msg,
		Hint: "a ProjectQuota has metadata.name (the project) and spec: cpu, memory, gpu, runs, weight, borrowing, preemption (see docs/quotas.md)",
	}
}

// applyQuotas stores the quotas of the files being applied, which only a
// sender who may write every project may do, and says what it did.
func (a *App) applyQuotas(ctx context.Context, in apiv1.TemplateApply, quotas []apiv1.ProjectQuota) ([]apiv1.Applied, error) {
	if len(quotas) > 0 && !in.AllProjects {
		return nil, &apiv1.Error{
			Code: apiv1.CodeForbidden, Object: apiv1.KindProjectQuota + "/" + quotas[0].Metadata.Name,
			Message: "a ProjectQuota shares the machine between projects: storing one needs a token of every project (*)",
			Hint:    "ask whoever runs the server to apply it",
		}
	}
	var out []apiv1.Applied
	for _, q := range quotas {
		_, getErr := a.Store.GetQuota(ctx, q.Metadata.Name)
		changed, err := a.Store.PutQuota(ctx, q, time.Now())
		if err != nil {
			return out, err
		}
		action := apiv1.ApplyUnchanged
		switch {
		case changed && getErr != nil:
			action = apiv1.ApplyCreated
		case changed:
			action = apiv1.ApplyConfigured
		}
		out = append(out, apiv1.Applied{Kind: apiv1.KindProjectQuota, Name: q.Metadata.Name, Project: q.Metadata.Name, Action: action})
	}
	if len(out) > 0 {
		wakeQuotaRefresh(ctx)
	}
	return out, nil
}

// Both pools keep quotas: the supervisor's on the local backend, the
// engine's own on Kubernetes.
var (
	_ controller.QuotaPool = (*local.Pool)(nil)
	_ controller.QuotaPool = (*resource.Pool)(nil)
)
