package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/controller"
	"kiln.dev/kiln/internal/federation"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/who"
	"kiln.dev/kiln/internal/workflow"
)

// The App is the host of its party's parts of federated runs: the other
// parties' initiators call these through the federation API (from is the
// calling party, already authenticated), and this server's own
// coordinator calls them in process.

// CreatePart creates this party's part of federated run req.Run, unless
// it exists: the party derives its part from the whole workflow itself.
func (a *App) CreatePart(ctx context.Context, from string, req apiv1.PartRequest) (apiv1.PartStatus, error) {
	if err := a.checkPartRequest(from, req); err != nil {
		return apiv1.PartStatus{}, err
	}
	id := apiv1.PartID(req.Run, a.Party)
	if _, err := a.Store.GetRun(ctx, id); err == nil { // a repeated request, or another party's run
		if _, err = a.partOf(ctx, from, req.Run); err != nil {
			return apiv1.PartStatus{}, err
		}
		return a.Controller.Parts().PartStatus(ctx, id)
	}
	plan, shares, err := a.derivePart(ctx, from, req)
	if err != nil {
		return apiv1.PartStatus{}, err
	}
	sp := controller.SubmitParams{
		Plan: plan, Params: req.Params, Project: a.partyProject(ctx, from), ID: id,
		Federation: &apiv1.FederationInfo{
			Initiator: req.Initiator, Party: a.Party, Run: req.Run, Part: true, Shares: shares,
			Roles:  req.Workflow.Spec.Federation.Roles,
			Inputs: workflow.CrossInputs(req.Workflow, a.Party), Exports: workflow.Exports(req.Workflow, a.Party),
		},
	}
	if req.RerunOf != "" {
		if sp.RerunOf, sp.Preset, err = a.partPreset(ctx, req, shares); err != nil {
			return apiv1.PartStatus{}, err
		}
	}
	_, err = a.Controller.Runs().Submit(ctx, sp)
	if err != nil && !errors.Is(err, store.ErrConflict) { // a twin request made it first
		return apiv1.PartStatus{}, err
	}
	a.heardFrom(ctx, id)
	return a.Controller.Parts().PartStatus(ctx, id)
}

// CheckPart checks, as the initiator submits its run, that this party
// would create its part of req's run: the part compiles here and this
// party's policy for from allows every share. Nothing is kept.
func (a *App) CheckPart(ctx context.Context, from string, req apiv1.PartRequest) error {
	if err := a.checkPartRequest(from, req); err != nil {
		return err
	}
	_, _, err := a.derivePart(ctx, from, req)
	return err
}

// derivePart derives and compiles this party's part of req's run, and
// checks it against this party's policy for from (its own runs answer to
// its own users' tokens, not to a policy).
func (a *App) derivePart(ctx context.Context, from string, req apiv1.PartRequest) (*workflow.Plan, []apiv1.ShareRef, error) {
	part, shares, err := workflow.PartOf(req.Workflow, a.Party)
	if err != nil {
		return nil, nil, err
	}
	doc := &workflow.Document{Kind: apiv1.KindWorkflow, Name: part.Metadata.Name}
	plan, err := workflow.CompilePart(doc, part, workflow.CrossInputs(req.Workflow, a.Party))
	if err != nil || from == a.Party {
		return plan, shares, err
	}
	p, err := a.Store.GetParty(ctx, from)
	if err != nil {
		return nil, nil, err
	}
	if err := federation.CheckPolicy(a.Party, p.Policy, policyShares(req.Workflow, plan, shares), runParams(req)); err != nil {
		return nil, nil, err
	}
	return plan, shares, checkExports(a.Party, p.Policy, req.Workflow, shares)
}

// checkExports refuses an output parameter of this party's shares that
// the workflow sends to other parties (to:) and the policy keeps here.
func checkExports(party string, pol *apiv1.PartyPolicy, whole *apiv1.Workflow, shares []apiv1.ShareRef) error {
	for k, t := range whole.Spec.Tasks {
		if t.Outputs == nil || !slices.ContainsFunc(shares, func(s apiv1.ShareRef) bool { return s.Task == t.Name }) {
			continue
		}
		for j, o := range t.Outputs.Parameters {
			if len(o.To) == 0 {
				continue
			}
			if err := federation.CheckOutput(party, pol, t.Name, o.Name, fmt.Sprintf("spec.tasks[%d].outputs.parameters[%d].to", k, j)); err != nil {
				return err
			}
		}
		for j, o := range t.Outputs.Artifacts {
			if len(o.To) == 0 {
				continue
			}
			if err := federation.CheckOutput(party, pol, t.Name, o.Name, fmt.Sprintf("spec.tasks[%d].outputs.artifacts[%d].to", k, j)); err != nil {
				return err
			}
		}
	}
	return nil
}

// policyShares are the part's tasks as a policy checks them, each named
// by its field in the whole workflow.
func policyShares(whole *apiv1.Workflow, plan *workflow.Plan, shares []apiv1.ShareRef) []federation.Share {
	out := make([]federation.Share, 0, len(plan.Tasks))
	for i := range plan.Tasks {
		t := &plan.Tasks[i]
		sh := federation.Share{Task: t.Spec, Field: "spec.tasks[" + t.Spec.Name + "]", Need: t.Request}
		for _, s := range shares {
			if k := slices.IndexFunc(whole.Spec.Tasks, func(w apiv1.Task) bool { return w.Name == s.Task }); s.Name == t.Spec.Name && k >= 0 {
				sh.Field, sh.EnvFields = fmt.Sprintf("spec.tasks[%d]", k), envFields(&whole.Spec.Tasks[k], s)
			}
		}
		out = append(out, sh)
	}
	return out
}

// envFields names, relative to the task's field, where each variable
// of share s was set: the task's env, then its perRole and perParty.
func envFields(t *apiv1.Task, s apiv1.ShareRef) map[string]string {
	out := map[string]string{}
	add := func(prefix string, env []apiv1.EnvVar) {
		for k, e := range env {
			out[e.Name] = fmt.Sprintf("%s.env[%d]", prefix, k)
		}
	}
	add("", t.Env)
	if o, ok := t.PerRole[s.Role]; ok {
		add(".perRole."+s.Role, o.Env)
	}
	if o, ok := t.PerParty[s.Party]; ok {
		add(".perParty."+s.Party, o.Env)
	}
	return out
}

// runParams are the run's params: the workflow's defaults under the
// values the run was given.
func runParams(req apiv1.PartRequest) map[string]string {
	out := map[string]string{}
	for _, p := range req.Workflow.Spec.Params {
		if p.Default != nil {
			out[p.Name] = *p.Default
		}
	}
	maps.Copy(out, req.Params)
	return out
}

// checkPartRequest checks that from may have this party take part in
// req's run: from initiates it, and this party fills one of its roles.
func (a *App) checkPartRequest(from string, req apiv1.PartRequest) error {
	obj := "Run/" + string(req.Run)
	switch {
	case from != req.Initiator:
		return &apiv1.Error{Code: apiv1.CodePartRefused, Object: obj, Message: fmt.Sprintf("party %s asked for a part of a run initiated by %s", from, req.Initiator)}
	case req.Workflow == nil || req.Workflow.Spec.Federation == nil:
		return &apiv1.Error{Code: apiv1.CodePartRefused, Object: obj, Message: "the request carries no federated workflow"}
	case !fills(req.Workflow.Spec.Federation.Roles, a.Party):
		return &apiv1.Error{Code: apiv1.CodePartRefused, Object: obj, Message: fmt.Sprintf("party %s fills none of the workflow's roles", a.Party)}
	}
	return nil
}

func fills(roles map[string][]string, party string) bool {
	for _, parties := range roles {
		if slices.Contains(parties, party) {
			return true
		}
	}
	return false
}

// partyProject is the project that party's parts go into.
func (a *App) partyProject(ctx context.Context, party string) string {
	if party == a.Party {
		return "default"
	}
	p, err := a.Store.GetParty(ctx, party)
	if err != nil {
		return "default"
	}
	return cmp.Or(p.Project, "default")
}

// PartStatus returns this party's part of run as it stands. A party
// that does not initiate the run is told it does not exist.
func (a *App) PartStatus(ctx context.Context, from string, run apiv1.RunID) (apiv1.PartStatus, error) {
	r, err := a.partOf(ctx, from, run)
	if err != nil {
		return apiv1.PartStatus{}, err
	}
	return a.Controller.Parts().PartStatus(ctx, r.ID)
}

// OrderShare carries out the initiator's order for task of this party's
// part of run. A reservation picks, once per attempt, the address the
// share's processes will listen on.
func (a *App) OrderShare(ctx context.Context, from string, run apiv1.RunID, task string, o apiv1.ShareOrder) (apiv1.ShareStatus, error) {
	part, err := a.partOf(ctx, from, run)
	if err != nil {
		return apiv1.ShareStatus{}, err
	}
	id := part.ID
	orders, err := a.Store.ShareOrders(ctx, id)
	if err != nil {
		return apiv1.ShareStatus{}, err
	}
	row := store.ShareOrderRow{ShareOrder: o, At: time.Now().UTC()}
	if last, ok := orders[task]; ok && last.Attempt == o.Attempt {
		row.Address = last.Address
		if len(row.Peers) == 0 {
			row.Peers = last.Peers
		}
	}
	if row.Address == "" && (o.Action == apiv1.OrderReserve || o.Action == apiv1.OrderStart) {
		if row.Address, err = a.shareAddress(); err != nil {
			return apiv1.ShareStatus{}, err
		}
	}
	if o.Action == apiv1.OrderStart {
		if row.Inputs, err = a.startInputs(ctx, part, task, o.Attempt, orders[task]); err != nil {
			return apiv1.ShareStatus{}, err
		}
	}
	return a.Controller.Parts().OrderShare(ctx, id, task, row)
}

// startInputs are the other parties' outputs the start of attempt n of
// share task reads: those fetched for it before, and the rest fetched now.
func (a *App) startInputs(ctx context.Context, run *apiv1.Run, task string, n int, last store.ShareOrderRow) (map[string]string, error) {
	if len(run.Federation.Inputs) == 0 {
		return nil, nil
	}
	var have map[string]string
	if last.Attempt == n {
		have = last.Inputs
	}
	return a.fetchInputs(ctx, run, task, n, have)
}

// StopPart cancels this party's part of run, or ends what of it has not
// ended (federation.StopEnd), suspends or resumes it.
func (a *App) StopPart(ctx context.Context, from string, run apiv1.RunID, how string) error {
	part, err := a.partOf(ctx, from, run)
	if err != nil {
		return err
	}
	id := part.ID
	switch how {
	case federation.StopCancel:
		return ignoreEnded(a.Cancel(who.With(ctx, "the federation's initiator, party "+from), id))
	case federation.StopEnd, federation.StopFail:
		if how == federation.StopFail {
			return a.endShares(ctx, part, apiv1.OrderFail, "", "the federated run failed at its initiator ("+part.Federation.Initiator+")")
		}
		return a.endShares(ctx, part, apiv1.OrderSkip, "", "the federated run ended")
	case "suspend", "resume":
		return ignoreEnded(a.Suspend(who.With(ctx, "the federation's initiator, party "+from), id, how == "suspend"))
	}
	return &apiv1.Error{Code: apiv1.CodeShareOrder, Object: "Run/" + string(id), Message: fmt.Sprintf("%q is not a way to stop a part (cancel, end, suspend or resume)", how)}
}

// endShares ends every share of part run that has not ended, with
// action (skip or fail) for reason: the initiator's run ended, or (with
// code) this party ends the part itself.
func (a *App) endShares(ctx context.Context, run *apiv1.Run, action string, code apiv1.Code, reason string) error {
	if run.Status.Phase.Done() {
		return nil
	}
	var errs []error
	for _, n := range run.Status.Nodes {
		if n.Phase.Done() {
			continue
		}
		attempt := 1 // the first, if none ran; else the last
		if k := len(n.Attempts); k > 0 {
			attempt = n.Attempts[k-1].Number
		}
		o := store.ShareOrderRow{ShareOrder: apiv1.ShareOrder{Attempt: attempt, Action: action, Reason: reason}, At: time.Now().UTC(), Code: code}
		if _, err := a.Controller.Parts().OrderShare(ctx, run.ID, n.Name, o); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// partOf is this party's part of run, after checking that from
// initiates it.
func (a *App) partOf(ctx context.Context, from string, run apiv1.RunID) (*apiv1.Run, error) {
	id := apiv1.PartID(run, a.Party)
	r, err := a.Store.GetRun(ctx, id)
	if err == nil && (r.Federation == nil || r.Federation.Initiator != from) {
		err = store.ErrNotFound
	}
	if err == nil {
		a.heardFrom(ctx, id)
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, &apiv1.Error{Code: apiv1.CodeRunNotFound, Object: "Run/" + string(run), Message: fmt.Sprintf("party %s has no part of run %s initiated by %s", a.Party, run, from)}
		}
		return nil, err
	}
	return r, nil
}

// shareAddress picks where a share's processes will listen: a free port
// on the host other parties reach this server at.
func (a *App) shareAddress() (string, error) {
	host := "127.0.0.1"
	if u, err := url.Parse(a.Advertise); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("picking a port for a share on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// ignoreEnded makes a request about a part that already ended a success.
func ignoreEnded(err error) error {
	var coded *apiv1.Error
	if errors.As(err, &coded) && coded.Code == apiv1.CodeRunPhase {
		return nil
	}
	return err
}

// notAPart refuses to run a party's part of a federated run again (a
// retry or a rerun): its initiator runs it.
func notAPart(run *apiv1.Run) error {
	if run.Federation == nil || !run.Federation.Part {
		return nil
	}
	return &apiv1.Error{
		Code: apiv1.CodeRunPhase, Object: "Run/" + string(run.ID),
		Message: fmt.Sprintf("run %s is party %s's part of federated run %s: only its initiator can run it again", run.ID, run.Federation.Party, run.Federation.Run),
		Hint:    fmt.Sprintf("at the initiator, %s: kiln rerun %s --from TASK", run.Federation.Initiator, run.Federation.Run),
	}
}

// partPreset is what of this party's part of a rerun starts ended: the
// shares of the tasks the rerun reuses, reused from this party's part of
// the source run, and those of the tasks it leaves out, Skipped.
func (a *App) partPreset(ctx context.Context, req apiv1.PartRequest, shares []apiv1.ShareRef) (*apiv1.RerunOf, []apiv1.NodeStatus, error) {
	srcID := apiv1.PartID(req.RerunOf, a.Party)
	src, err := a.Store.GetRun(ctx, srcID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, nil, err
	}
	var preset []apiv1.NodeStatus
	for _, s := range shares {
		switch req.Preset[s.Task] {
		case apiv1.PhaseSkipped:
			preset = append(preset, apiv1.NodeStatus{Name: s.Name, Phase: apiv1.PhaseSkipped, Message: "not part of this rerun at its initiator"})
		case apiv1.PhaseSucceeded:
			var n *apiv1.NodeStatus
			if src != nil {
				n = src.Status.Node(s.Name)
			}
			if n == nil || n.Phase != apiv1.PhaseSucceeded {
				return nil, nil, &apiv1.Error{
					Code: apiv1.CodePartRefused, Object: "Run/" + string(req.Run),
					Message: fmt.Sprintf("the rerun reuses task %s, but party %s has no succeeded share %s in its part %s of run %s", s.Task, a.Party, s.Name, srcID, req.RerunOf),
					Hint:    "rerun from an earlier task, so that this party runs its share again",
				}
			}
			preset = append(preset, controller.ReusedNode(srcID, *n))
		}
	}
	return &apiv1.RerunOf{Run: srcID}, preset, nil
}
