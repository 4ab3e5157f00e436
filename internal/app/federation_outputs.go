package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/federation"
	"kiln.dev/kiln/internal/store"
)

// An output parameter crosses parties party to party: the party whose
// share reads it fetches it from the party whose share has it, when the
// reading share's start is ordered; the owning party answers only a
// party the workflow's to names, and only if its policy lets the output
// leave. Both ends log it in the channel log ("output.PARAM").

// PartOutput answers from, a party of federated run, output param of
// this party's share of task.
func (a *App) PartOutput(ctx context.Context, from string, run apiv1.RunID, task, param string) (string, error) {
	id := apiv1.PartID(run, a.Party)
	r, err := a.Store.GetRun(ctx, id)
	if err == nil && (r.Federation == nil || !r.Federation.Part || !fills(r.Federation.Roles, from)) {
		err = store.ErrNotFound
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return "", &apiv1.Error{Code: apiv1.CodeRunNotFound, Object: "Run/" + string(run), Message: fmt.Sprintf("party %s has no part of run %s that party %s takes part in", a.Party, run, from)}
		}
		return "", err
	}
	f := r.Federation
	k := slices.IndexFunc(f.Shares, func(s apiv1.ShareRef) bool { return s.Task == task })
	if k < 0 {
		return "", outputRefused(id, fmt.Sprintf("party %s runs no share of task %s", a.Party, task))
	}
	share := f.Shares[k]
	to := f.Exports[share.Name+"."+param]
	if !slices.ContainsFunc(to, func(role string) bool { return slices.Contains(f.Roles[role], from) }) {
		return "", &apiv1.Error{
			Code: apiv1.CodeCrossParty, Object: "Run/" + string(run),
			Message: fmt.Sprintf("output %s of task %s does not go to party %s: the workflow's to names %v", param, task, from, to),
		}
	}
	if err := a.outputMayLeave(ctx, f.Initiator, task, param); err != nil {
		return "", err
	}
	n := r.Status.Node(share.Name)
	v, ok := "", false
	if n != nil && n.Phase == apiv1.PhaseSucceeded {
		v, ok = n.Outputs[param]
	}
	if !ok {
		return "", outputRefused(id, fmt.Sprintf("share %s has not succeeded with output %s", share.Name, param))
	}
	err = a.Store.LogMessage(ctx, id, outputMessage(apiv1.ChannelSent, task, share.Role, from, "", lastAttempt(n), param, v))
	return v, channelError(federation.ShareAt{Part: id}, "output."+param, err)
}

// outputMayLeave checks this party's policy for initiator: the output
// TASK.PARAM may leave. The party's own runs answer to no policy.
func (a *App) outputMayLeave(ctx context.Context, initiator, task, param string) error {
	if initiator == a.Party {
		return nil
	}
	p, err := a.Store.GetParty(ctx, initiator)
	if err != nil {
		return err
	}
	return federation.CheckOutput(a.Party, p.Policy, task, param, "")
}

func outputRefused(id apiv1.RunID, msg string) error {
	return &apiv1.Error{Code: apiv1.CodeShareOrder, Object: "Run/" + string(id), Message: msg}
}

// outputMessage is the channel log's row of output param of task that
// crossed parties: sent to peer, or received from it, by the share of
// role here, in its attempt.
func outputMessage(direction, task, role, peer, peerRole string, attempt int, param, value string) apiv1.ChannelMessage {
	sum := sha256.Sum256([]byte(value))
	return apiv1.ChannelMessage{
		Direction: direction, Task: task, Attempt: attempt, Role: role, Party: peer, PeerRole: peerRole, Name: "output." + param,
		Size: int64(len(value)), Digest: "sha256:" + hex.EncodeToString(sum[:]), Chunks: 1, At: time.Now().UTC(),
	}
}

// lastAttempt is the number of n's last attempt, 0 if none.
func lastAttempt(n *apiv1.NodeStatus) int {
	if n == nil || len(n.Attempts) == 0 {
		return 0
	}
	return n.Attempts[len(n.Attempts)-1].Number
}

// fetchInputs fetches, for the start of attempt n of share of part run,
// the other parties' outputs it reads. An input fetched for the same
// attempt is kept.
func (a *App) fetchInputs(ctx context.Context, run *apiv1.Run, share string, attempt int, have map[string]string) (map[string]string, error) {
	f := run.Federation
	out := maps.Clone(have)
	for _, in := range f.Inputs {
		if in.Share != share {
			continue
		}
		if _, ok := out[in.Key()]; ok {
			continue
		}
		v, err := a.fetchOutput(ctx, f.Run, in)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]string{}
		}
		out[in.Key()] = v
		role := ""
		if k := slices.IndexFunc(f.Shares, func(s apiv1.ShareRef) bool { return s.Name == share }); k >= 0 {
			role = f.Shares[k].Role
		}
		m := outputMessage(apiv1.ChannelReceived, in.Task, role, in.Party, in.Role, attempt, in.Param, v)
		if err := a.Store.LogMessage(ctx, run.ID, m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fetchOutput asks in's party for its output, over the party link.
func (a *App) fetchOutput(ctx context.Context, run apiv1.RunID, in apiv1.CrossInput) (string, error) {
	if in.Party == a.Party {
		return a.PartOutput(ctx, a.Party, run, in.Task, in.Param)
	}
	c, err := a.PartyClient(ctx, in.Party)
	if err != nil {
		return "", err
	}
	return c.PartOutput(ctx, run, in.Task, in.Param)
}
