package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/federation"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/store"
)

// An output crosses parties party to party: the party whose share reads
// it fetches it from the party whose share has it, when the reading
// share's start is ordered; the owning party answers only a party the
// workflow's to names, and only if its policy lets the output leave.
// Both ends log it in the channel log (output.NAME, artifact.NAME).

// MaxCrossArtifact bounds an artifact that crosses parties (a file).
const MaxCrossArtifact = 256 << 20

// PartOutput answers from, a party of federated run, output param of
// this party's share of task.
func (a *App) PartOutput(ctx context.Context, from string, run apiv1.RunID, task, param string) (string, error) {
	r, share, n, err := a.exported(ctx, from, run, task, param, false)
	if err != nil {
		return "", err
	}
	v, ok := n.Outputs[param]
	if !ok {
		return "", outputRefused(r.ID, fmt.Sprintf("share %s wrote no output %s", share.Name, param))
	}
	err = a.Store.LogMessage(ctx, r.ID, outputMessage(apiv1.ChannelSent, task, share.Role, from, "", lastAttempt(n), "output."+param, []byte(v)))
	return v, channelError(federation.ShareAt{Part: r.ID}, "output."+param, err)
}

// PartArtifact answers from, a party of federated run, the bytes of
// artifact name (a file) of this party's share of task.
func (a *App) PartArtifact(ctx context.Context, from string, run apiv1.RunID, task, name string) ([]byte, error) {
	r, share, n, err := a.exported(ctx, from, run, task, name, true)
	if err != nil {
		return nil, err
	}
	var path string
	for _, t := range r.Workflow.Spec.Tasks {
		if t.Name != share.Name || t.Outputs == nil {
			continue
		}
		if k := slices.IndexFunc(t.Outputs.Artifacts, func(o apiv1.Artifact) bool { return o.Name == name }); k >= 0 {
			path = t.Outputs.Artifacts[k].Path
		}
	}
	fr, ok := backend.As[backend.FileReader](a.Backend)
	if path == "" || !ok {
		return nil, outputRefused(r.ID, fmt.Sprintf("share %s has no artifact %s this server can read", share.Name, name))
	}
	data, err := fr.ReadFile(ctx, job.AttemptID{Run: string(r.ID), Node: share.Name, Number: lastAttempt(n)}, path, MaxCrossArtifact)
	if err != nil {
		return nil, outputRefused(r.ID, fmt.Sprintf("reading artifact %s of share %s (a file of at most %d bytes): %v", name, share.Name, MaxCrossArtifact, err))
	}
	err = a.Store.LogMessage(ctx, r.ID, outputMessage(apiv1.ChannelSent, task, share.Role, from, "", lastAttempt(n), "artifact."+name, data))
	return data, channelError(federation.ShareAt{Part: r.ID}, "artifact."+name, err)
}

// exported finds this party's succeeded share of task in its part of
// run, after checking that output name (an artifact, or a parameter) may
// go to from: the workflow's to names a role from fills, and this party's
// policy for the initiator lets it leave.
func (a *App) exported(ctx context.Context, from string, run apiv1.RunID, task, name string, artifact bool) (*apiv1.Run, apiv1.ShareRef, *apiv1.NodeStatus, error) {
	id := apiv1.PartID(run, a.Party)
	r, err := a.Store.GetRun(ctx, id)
	if err == nil && (r.Federation == nil || !r.Federation.Part || !fills(r.Federation.Roles, from)) {
		err = store.ErrNotFound
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			err = &apiv1.Error{Code: apiv1.CodeRunNotFound, Object: "Run/" + string(run), Message: fmt.Sprintf("party %s has no part of run %s that party %s takes part in", a.Party, run, from)}
		}
		return nil, apiv1.ShareRef{}, nil, err
	}
	f := r.Federation
	k := slices.IndexFunc(f.Shares, func(s apiv1.ShareRef) bool { return s.Task == task })
	if k < 0 {
		return nil, apiv1.ShareRef{}, nil, outputRefused(id, fmt.Sprintf("party %s runs no share of task %s", a.Party, task))
	}
	share := f.Shares[k]
	key := share.Name + "." + name
	if artifact {
		key = share.Name + ".artifacts." + name
	}
	to := f.Exports[key]
	if !slices.ContainsFunc(to, func(role string) bool { return slices.Contains(f.Roles[role], from) }) {
		return nil, share, nil, &apiv1.Error{
			Code: apiv1.CodeCrossParty, Object: "Run/" + string(run),
			Message: fmt.Sprintf("output %s of task %s does not go to party %s: the workflow's to names %v", name, task, from, to),
		}
	}
	if f.Initiator != a.Party {
		p, err := a.Store.GetParty(ctx, f.Initiator)
		if err != nil {
			return nil, share, nil, err
		}
		if err := federation.CheckOutput(a.Party, p.Policy, task, name, ""); err != nil {
			return nil, share, nil, err
		}
	}
	n := r.Status.Node(share.Name)
	if n == nil || n.Phase != apiv1.PhaseSucceeded {
		return nil, share, nil, outputRefused(id, fmt.Sprintf("share %s has not succeeded", share.Name))
	}
	return r, share, n, nil
}

func outputRefused(id apiv1.RunID, msg string) error {
	return &apiv1.Error{Code: apiv1.CodeShareOrder, Object: "Run/" + string(id), Message: msg}
}

// outputMessage is the channel log's row of an output of task that
// crossed parties (name output.PARAM or artifact.NAME): sent to peer, or
// received from it, by the share of role here, in its attempt.
func outputMessage(direction, task, role, peer, peerRole string, attempt int, name string, data []byte) apiv1.ChannelMessage {
	sum := sha256.Sum256(data)
	return apiv1.ChannelMessage{
		Direction: direction, Task: task, Attempt: attempt, Role: role, Party: peer, PeerRole: peerRole, Name: name,
		Size: int64(len(data)), Digest: "sha256:" + hex.EncodeToString(sum[:]), Chunks: 1, At: time.Now().UTC(),
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
// the other parties' outputs it reads: a parameter's value, or the path
// here of an artifact's copy. An input fetched for the same attempt is
// kept.
func (a *App) fetchInputs(ctx context.Context, run *apiv1.Run, share string, attempt int, have map[string]string) (map[string]string, error) {
	f := run.Federation
	out := maps.Clone(have)
	role := ""
	if k := slices.IndexFunc(f.Shares, func(s apiv1.ShareRef) bool { return s.Name == share }); k >= 0 {
		role = f.Shares[k].Role
	}
	for _, in := range f.Inputs {
		if _, ok := out[in.Key()]; ok || in.Share != share {
			continue
		}
		v, data, err := a.fetchInput(ctx, run.ID, f.Run, in, attempt)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]string{}
		}
		out[in.Key()] = v
		name := "output." + in.Param
		if in.Artifact {
			name = "artifact." + in.Param
		}
		if err := a.Store.LogMessage(ctx, run.ID, outputMessage(apiv1.ChannelReceived, in.Task, role, in.Party, in.Role, attempt, name, data)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fetchInput asks in's party for it, over the party link, and returns
// what the share reads (a parameter's value, an artifact's path here)
// and the bytes that crossed.
func (a *App) fetchInput(ctx context.Context, part, run apiv1.RunID, in apiv1.CrossInput, attempt int) (string, []byte, error) {
	var c federation.Outputs = selfOutputs{a}
	if in.Party != a.Party {
		pc, err := a.PartyClient(ctx, in.Party)
		if err != nil {
			return "", nil, err
		}
		c = pc
	}
	if !in.Artifact {
		v, err := c.PartOutput(ctx, run, in.Task, in.Param)
		return v, []byte(v), err
	}
	if !backend.Has[backend.HostOutputs](a.Backend) {
		return "", nil, &apiv1.Error{
			Code: apiv1.CodeCrossParty, Object: "Run/" + string(part),
			Message: fmt.Sprintf("artifact %s of task %s crosses parties as a file of this server's, which the processes of this party's %s backend, on other machines, cannot read", in.Param, in.Task, backend.NameOf(a.Backend)),
			Hint:    "send it with kiln.federation.send_file within one federated task",
		}
	}
	data, err := c.PartArtifact(ctx, run, in.Task, in.Param)
	if err != nil {
		return "", nil, err
	}
	path, err := a.keepInput(part, in, attempt, data)
	return path, data, err
}

// keepInput writes an artifact fetched for attempt n of a share where the
// share's processes read it: under KILN_HOME/federation, readable by the
// accounts tasks run as, removed with the part.
func (a *App) keepInput(part apiv1.RunID, in apiv1.CrossInput, n int, data []byte) (string, error) {
	dir := filepath.Join(a.Home, "federation", string(part), in.Share, strconv.Itoa(n), in.Task)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for d := dir; d != a.Home; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			return "", err
		}
	}
	path := filepath.Join(dir, in.Param)
	tmp := path + ".part"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// selfOutputs is this party's own outputs, asked in process.
type selfOutputs struct{ a *App }

func (s selfOutputs) PartOutput(ctx context.Context, run apiv1.RunID, task, param string) (string, error) {
	return s.a.PartOutput(ctx, s.a.Party, run, task, param)
}

func (s selfOutputs) PartArtifact(ctx context.Context, run apiv1.RunID, task, name string) ([]byte, error) {
	return s.a.PartArtifact(ctx, s.a.Party, run, task, name)
}
