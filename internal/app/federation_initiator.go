package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/federation"
)

// federate gives a server with a party identity its coordinator: the
// engine's backend runs federated attempts at the parties.
func (a *App) federate(inner backend.Backend, log *slog.Logger) (backend.Backend, error) {
	if log == nil {
		log = slog.Default()
	}
	return federation.Wrap(inner, federation.NewCoordinator(directory{a}, a.Store, log))
}

// directory finds the parties this server trusts: itself, in process,
// and the registered ones, through their API.
type directory struct{ a *App }

// Party implements federation.Directory.
func (d directory) Party(ctx context.Context, name string) (federation.Party, error) {
	if name == d.a.Party {
		return self(d), nil
	}
	c, err := d.a.PartyClient(ctx, name)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// self is this server's own party, called in process.
type self struct{ a *App }

func (s self) CreatePart(ctx context.Context, req apiv1.PartRequest) (apiv1.PartStatus, error) {
	return s.a.CreatePart(ctx, s.a.Party, req)
}

func (s self) PartStatus(ctx context.Context, run apiv1.RunID) (apiv1.PartStatus, error) {
	return s.a.PartStatus(ctx, s.a.Party, run)
}

func (s self) OrderShare(ctx context.Context, run apiv1.RunID, task string, o apiv1.ShareOrder) (apiv1.ShareStatus, error) {
	return s.a.OrderShare(ctx, s.a.Party, run, task, o)
}

func (s self) StopPart(ctx context.Context, run apiv1.RunID, how string) error {
	return s.a.StopPart(ctx, s.a.Party, run, how)
}

func (s self) CheckPart(ctx context.Context, req apiv1.PartRequest) error {
	return s.a.CheckPart(ctx, s.a.Party, req)
}

// checkFederated checks, before a federated workflow is submitted, that
// this server has a party identity and knows every party it names, and
// returns how the run takes part.
func (a *App) checkFederated(ctx context.Context, wf *apiv1.Workflow, params map[string]string) (*apiv1.FederationInfo, error) {
	f := wf.Spec.Federation
	if f == nil {
		return nil, nil
	}
	if a.Party == "" {
		return nil, &apiv1.Error{
			Code: apiv1.CodeNoPartyIdentity, Object: "Workflow/" + wf.Metadata.Name, Field: "spec.federation",
			Message: "a federated workflow runs on a server with a party identity; this kiln has none",
			Hint:    "start kiln serve --party NAME --advertise URL and submit with --server",
		}
	}
	found := map[string]federation.Party{}
	for role, parties := range f.Roles {
		for _, p := range parties {
			party, err := (directory{a}).Party(ctx, p)
			if err != nil {
				var coded *apiv1.Error
				if errors.As(err, &coded) {
					coded.Object, coded.Field = "Workflow/"+wf.Metadata.Name, "spec.federation.roles."+role
				}
				return nil, err
			}
			found[p] = party
		}
	}
	if err := checkParts(ctx, found, apiv1.PartRequest{Initiator: a.Party, Workflow: wf, Params: params}); err != nil {
		return nil, err
	}
	return &apiv1.FederationInfo{Initiator: a.Party, Party: a.Party, Roles: f.Roles}, nil
}

// checkPartTimeout bounds the question each party is asked at submit.
const checkPartTimeout = 10 * time.Second

// checkParts asks every party at once whether it would create its part
// of the run, and returns the first refusal (its policy's, its pool's,
// the spec's there). A party that does not answer is let through: it
// asks again, and refuses if it must, when the run reaches it.
func checkParts(ctx context.Context, parties map[string]federation.Party, req apiv1.PartRequest) error {
	ctx, cancel := context.WithTimeout(ctx, checkPartTimeout)
	defer cancel()
	errs := make(map[string]error, len(parties))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, p := range parties {
		wg.Go(func() {
			err := p.CheckPart(ctx, req)
			mu.Lock()
			errs[name] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, name := range slices.Sorted(maps.Keys(errs)) {
		var coded *apiv1.Error
		switch {
		case !federation.IsRefusal(errs[name]) || !errors.As(errs[name], &coded):
		case coded.Code == apiv1.CodePolicy:
			return coded // it names the party, the rule and the field
		default:
			return &apiv1.Error{
				Code: apiv1.CodePartRefused, Object: coded.Object, Field: coded.Field,
				Message: fmt.Sprintf("party %s refuses to take part: %s %s", name, coded.Code, coded.Message), Hint: coded.Hint,
			}
		}
	}
	return nil
}

// closeParts waits for federated run id to end, then stops what is left
// of it at every party: cancelled with it, or ended. A party that does
// not answer is asked again, with backoff, for up to closeFor.
func (a *App) closeParts(ctx context.Context, id apiv1.RunID, roles map[string][]string) {
	select {
	case <-a.Controller.Runs().Done(id):
	case <-ctx.Done():
		return
	}
	run, err := a.Store.GetRun(ctx, id)
	if err != nil || !run.Status.Phase.Done() { // not this engine's any more: its owner closes them
		return
	}
	how := federation.StopEnd
	switch run.Status.Phase {
	case apiv1.PhaseCancelled:
		how = federation.StopCancel
	case apiv1.PhaseFailed:
		how = federation.StopFail
	}
	left := map[string]bool{}
	for _, p := range partiesOf(roles) {
		left[p] = true
	}
	wait := time.Second
	for until := time.Now().Add(closeFor); len(left) > 0 && time.Now().Before(until); wait = min(2*wait, closeEvery) {
		for p := range left {
			if a.stopPartAt(ctx, p, id, how) {
				delete(left, p)
			}
		}
		if len(left) > 0 && !sleep(ctx, wait) {
			return
		}
	}
}

// closeFor bounds how long a finished run keeps asking its parties to
// close their parts.
const closeFor = time.Hour

// closeEvery caps the pause between two asks of a party that did not
// answer: a party that comes back closes its part within about this long
// (plus one ask's timeout), not a minute later; an ask costs one request.
const closeEvery = 10 * time.Second

// stopPartAt asks party p to stop its part of run id, and reports whether
// that is settled (done, or refused for good).
func (a *App) stopPartAt(ctx context.Context, p string, id apiv1.RunID, how string) bool {
	party, err := directory{a}.Party(ctx, p)
	if err == nil {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = party.StopPart(cctx, id, how)
		cancel()
	}
	return err == nil || federation.IsRefusal(err)
}

// watchFederated closes the parts of federated run id once it ends.
func (a *App) watchFederated(id apiv1.RunID, roles map[string][]string) {
	ctx := a.life
	if ctx == nil {
		ctx = context.Background()
	}
	go a.closeParts(ctx, id, roles)
}

// watchClaimed watches the federated runs among claimed, which this
// server initiated: their parts are closed when they end.
func (a *App) watchClaimed(ctx context.Context, claimed []apiv1.RunID) {
	for _, id := range claimed {
		if run, err := a.Store.GetRun(ctx, id); err == nil && run.Federation != nil && !run.Federation.Part {
			a.watchFederated(id, run.Federation.Roles)
		}
	}
}
