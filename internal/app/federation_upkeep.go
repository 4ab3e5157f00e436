package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// How parts of federated runs are kept bounded (docs/federation.md, "No
// part is ever stuck"): an initiator calls each party of its unfinished
// runs every heartbeatEvery, whether or not an attempt runs there; a
// party ends a part whose initiator was silent longer than its idle
// timeout.
const (
	// DefaultPartyIdleTimeout is a party's idle timeout unless set.
	DefaultPartyIdleTimeout = 10 * time.Minute
	// MinPartyIdleTimeout is the least one: several heartbeats.
	MinPartyIdleTimeout = 20 * time.Second
	heartbeatEvery      = 5 * time.Second
	// heardEvery spaces the writes of when an initiator was heard.
	heardEvery = 2 * time.Second
)

// tendParts, on a server with a party identity, sends the heartbeats of
// the runs it initiates, ends the parts whose initiator went silent, and
// drops the channel messages of parts that ended, every heartbeatEvery
// until ctx ends. The returned channel closes when it returns.
func (a *App) tendParts(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	if a.Party == "" {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			a.heartbeat(ctx)
			a.endSilentParts(ctx)
			if _, err := a.Store.DropEndedChannels(ctx); err != nil && ctx.Err() == nil {
				a.Controller.Logger().Warn("dropping the channel messages of ended parts", "err", err)
			}
			a.dropEndedInputs(ctx)
		}
	}()
	return done
}

// heartbeat asks every other party of every unfinished run this server
// initiates for its part, so that the party hears from its initiator
// between attempts too. Answers do not matter; calls are made at once,
// each bounded.
func (a *App) heartbeat(ctx context.Context) {
	runs, err := a.Store.ListRuns(ctx, store.ListRunsParams{Unfinished: true, Limit: 10000})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, heartbeatEvery)
	defer cancel()
	var wg sync.WaitGroup
	for _, r := range runs {
		f := r.Federation
		if f == nil || f.Part || f.Initiator != a.Party {
			continue
		}
		for _, party := range partiesOf(f.Roles) {
			if party == a.Party {
				continue
			}
			wg.Go(func() {
				if c, err := a.PartyClient(ctx, party); err == nil {
					_, _ = c.PartStatus(ctx, r.ID)
				}
			})
		}
	}
	wg.Wait()
}

// partiesOf lists the parties of roles once each, in order.
func partiesOf(roles map[string][]string) []string {
	var out []string
	for _, parties := range roles {
		out = append(out, parties...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// endSilentParts fails every part whose initiator was silent longer than
// this party's idle timeout: each share that has not ended fails with
// KLN-7023, a running one is stopped, and its room is given back.
func (a *App) endSilentParts(ctx context.Context) {
	now := time.Now()
	silent, err := a.Store.SilentParts(ctx, now.Add(-a.partyIdle))
	if err != nil {
		return
	}
	for id, at := range silent {
		run, err := a.Store.GetRun(ctx, id)
		if err != nil || run.Federation == nil || !run.Federation.Part {
			continue
		}
		reason := fmt.Sprintf("the initiator, party %s, was last heard from %s ago (%s), longer than this party's idle timeout of %s (--party-idle-timeout)",
			run.Federation.Initiator, now.Sub(at).Round(time.Second), at.Format(time.RFC3339), a.partyIdle)
		if err := a.endShares(ctx, run, apiv1.OrderFail, apiv1.CodePartIdle, reason); err != nil {
			a.Controller.Logger().Warn("ending a part whose initiator is silent", "run", id, "err", err)
		}
	}
}

// heardLog remembers when this process last wrote that each part's
// initiator called, so that a part polled every second is written at
// most every heardEvery.
type heardLog struct {
	mu   sync.Mutex
	last map[apiv1.RunID]time.Time
}

// heardFrom records that part id's initiator called now.
func (a *App) heardFrom(ctx context.Context, id apiv1.RunID) {
	now := time.Now()
	h := &a.heard
	h.mu.Lock()
	if h.last == nil {
		h.last = map[apiv1.RunID]time.Time{}
	}
	due := now.Sub(h.last[id]) >= heardEvery
	if due {
		h.last[id] = now
	}
	if len(h.last) > 10000 { // forget parts long silent; they are written again when heard
		for k, t := range h.last {
			if now.Sub(t) > time.Minute {
				delete(h.last, k)
			}
		}
	}
	h.mu.Unlock()
	if due {
		if err := a.Store.HeardFromInitiator(ctx, id, now.UTC()); err != nil {
			a.Controller.Logger().Warn("recording a call of a part's initiator", "run", id, "err", err)
		}
	}
}

// dropEndedInputs removes the artifacts fetched from other parties for
// the shares of parts that ended (KILN_HOME/federation/PART).
func (a *App) dropEndedInputs(ctx context.Context) {
	dir := filepath.Join(a.Home, "federation")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		r, err := a.Store.GetRun(ctx, apiv1.RunID(e.Name()))
		if (err == nil && r.Status.Phase.Done()) || errors.Is(err, store.ErrNotFound) {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}
