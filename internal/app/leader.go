package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/leader"
	"kiln.dev/kiln/internal/store"
)

// claimEvery is how often the leader claims the runs no engine works:
// those followers saved, and those of an earlier leader.
const claimEvery = 500 * time.Millisecond

// Lead runs this server as one replica of a shared store (Replicated):
// it follows, serving the API and saving runs for the leader, until it
// wins the leadership; then it starts the engine under its term, adopts
// the runs of the leader before it with their running attempts, and
// claims the runs followers save. It returns nil when ctx ends, and
// KLN-5051 when this server no longer leads (another replica took over,
// or the store refused a write of its term): the caller must stop.
// address is where this server serves the API, for others to show; say,
// if set, is told when this server wins, and what it should know then.
func (a *App) Lead(ctx context.Context, address string, say func(string)) error {
	a.elector = leader.New(leader.Config{
		Store: a.Store, Holder: a.Controller.Leadership().Owner(), Address: address, IsDead: ownerDead, Log: a.log,
	})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fenced := make(chan struct{})
	go func() {
		select {
		case <-a.Controller.Leadership().Fenced():
			close(fenced)
			cancel()
		case <-ctx.Done():
		}
	}()
	err := a.elector.Run(ctx, func(term int64, before store.Leader) {
		a.log.Info("this replica leads", "term", term, "address", address)
		a.Controller.Leadership().Lead(term)
		a.Start()
		go a.claimLoop(ctx)
		if say == nil {
			return
		}
		say(fmt.Sprintf("this server leads (term %d): it runs the engine and adopts the runs of the leader before it", term))
		if h := hostOf(before.Holder); !backend.Has[backend.SharedAttempts](a.Backend) && h != "" && h != hostOf(a.Controller.Leadership().Owner()) {
			say("warning: the leader before this one ran on host " + h + ": the local tasks it started there cannot be adopted " +
				"from this machine, and will be found lost and run again. Replicas that run local tasks must share one machine (docs/team.md)")
		}
	})
	if isClosed(fenced) {
		return lostLeadership("the store refused a write of its term, which had ended: another replica leads")
	}
	var lost *leader.LostError
	if errors.As(err, &lost) {
		return lostLeadership(lost.Error())
	}
	return err
}

func lostLeadership(why string) error {
	return &apiv1.Error{Code: apiv1.CodeLeadershipLost, Message: "this server stopped leading: " + why}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// claimLoop claims, every claimEvery until ctx ends, the runs no live
// engine works.
func (a *App) claimLoop(ctx context.Context) {
	t := time.NewTicker(claimEvery)
	defer t.Stop()
	for {
		if _, err := a.Claim(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("claiming runs", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Leadership reports who leads the replicas of the store, as this server
// last saw, and whether it is this server. A server whose store is not
// shared always leads.
func (a *App) Leadership() (store.Leader, bool) {
	if !a.Replicated || a.elector == nil {
		return store.Leader{Holder: a.Controller.Leadership().Owner(), Address: a.Advertise}, !a.Replicated
	}
	return a.elector.Leader()
}

// leading is Leadership for the metrics.
func (a *App) leading() (holder, address string, term int64, self bool) {
	l, self := a.Leadership()
	return l.Holder, l.Address, l.Term, self
}

// resign gives up the leadership, if this server holds it, so that a
// follower takes over at once.
func (a *App) resign() {
	if a.elector == nil {
		return
	}
	l, self := a.elector.Leader()
	if !self {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := a.elector.Resign(ctx, l.Term); err != nil {
		a.log.Warn("resigning the leadership", "term", l.Term, "err", err)
	}
}

// hostOf is the host an engine's owner name (ownerID) names.
func hostOf(owner string) string {
	host, _, _ := strings.Cut(owner, ":")
	return host
}
