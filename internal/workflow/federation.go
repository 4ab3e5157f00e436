package workflow

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// DefaultFederationTimeout is spec.federation's admissionTimeout and
// partyTimeout when they are not set.
const DefaultFederationTimeout = 60 * time.Second

// FederatedTask is a task of a federated workflow, compiled: on the
// initiator it holds no room of its own and runs nothing; its shares run
// at the parties, each as a task of the party's part of the run.
type FederatedTask struct {
	// Shares are the task's shares, one per (role, party): in the order
	// of the task's roles, then of each role's parties.
	Shares []apiv1.ShareRef
	// AdmissionTimeout bounds how long an attempt waits for every share
	// to be reserved: the task's admissionTimeout, else the workflow's
	// spec.federation.admissionTimeout, else DefaultFederationTimeout.
	AdmissionTimeout time.Duration
	// PartyTimeout bounds how long a party may stay unreachable while one
	// of the task's shares runs (spec.federation.partyTimeout, else
	// DefaultFederationTimeout).
	PartyTimeout time.Duration
}

// Parties lists the parties that run a share of the task, each once, in
// the order of Shares.
func (f *FederatedTask) Parties() []string {
	parties := make([]string, len(f.Shares))
	for i, s := range f.Shares {
		parties[i] = s.Party
	}
	return distinct(parties)
}

// Shares lists task t's shares under fed: one per (role, party), in the
// order of t's roles, then of each role's parties. A share is named after
// its task, or <task>-<role> when its party fills several of t's roles.
// A role or party listed twice counts once.
func Shares(fed *apiv1.Federation, t *apiv1.Task) []apiv1.ShareRef {
	if fed == nil {
		return nil
	}
	roles := distinct(t.Roles)
	filled := map[string]int{}
	for _, role := range roles {
		for _, party := range distinct(fed.Roles[role]) {
			filled[party]++
		}
	}
	var out []apiv1.ShareRef
	for _, role := range roles {
		for _, party := range distinct(fed.Roles[role]) {
			name := t.Name
			if filled[party] > 1 {
				name = t.Name + "-" + role
			}
			out = append(out, apiv1.ShareRef{Task: t.Name, Party: party, Role: role, Name: name})
		}
	}
	return out
}

// distinct is names without the repeats, in order.
func distinct(names []string) []string {
	var out []string
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// PartOf derives party's part of the federated workflow wf: a plain
// workflow, named <workflow>-<party>, whose tasks are party's shares, in
// wf's order, with the task's perRole and then perParty applied. The
// part has no spec.federation, roles, onExit nor outputs; its tasks keep
// dependsOn only on the tasks party has shares of, and lose their
// admissionTimeout and retries' backoff (the initiator orders and paces
// every attempt). The shares returned name, for each task of the part,
// which task and role it is a share of. wf is left as it is. The error is
// a KLN-1067 *apiv1.Error when party has no share of wf.
func PartOf(wf *apiv1.Workflow, party string) (*apiv1.Workflow, []apiv1.ShareRef, error) {
	fed := wf.Spec.Federation
	if fed == nil {
		return nil, nil, noShare(wf, "spec.federation", "workflow %q is not federated: it has no parts", wf.Metadata.Name)
	}
	part, err := deepCopy(wf)
	if err != nil {
		return nil, nil, err
	}
	mine := map[string][]string{} // task → its shares' names at party
	var refs []apiv1.ShareRef
	var tasks []apiv1.Task
	for i := range wf.Spec.Tasks {
		for _, s := range Shares(fed, &wf.Spec.Tasks[i]) {
			if s.Party != party {
				continue
			}
			t, err := deepCopy(&wf.Spec.Tasks[i])
			if err != nil {
				return nil, nil, err
			}
			mine[s.Task] = append(mine[s.Task], s.Name)
			refs = append(refs, s)
			tasks = append(tasks, shareTask(*t, s))
		}
	}
	if len(tasks) == 0 {
		return nil, nil, noShare(wf, "spec.federation.roles", "party %q fills no role of any task of workflow %q", party, wf.Metadata.Name)
	}
	deps := map[string][]string{}
	for _, t := range wf.Spec.Tasks {
		deps[t.Name] = t.DependsOn
	}
	for i := range tasks {
		tasks[i].DependsOn = localDeps(tasks[i].DependsOn, deps, mine, map[string]bool{})
		crossRefs(wf, &tasks[i], mine)
	}
	part.Metadata.Name = wf.Metadata.Name + "-" + party
	part.Spec.Tasks = tasks
	part.Spec.Federation, part.Spec.OnExit, part.Spec.Outputs = nil, nil, nil
	return part, refs, nil
}

// shareTask is t as share s runs it. t is a deep copy of its own, which
// it changes.
func shareTask(t apiv1.Task, s apiv1.ShareRef) apiv1.Task {
	role, party := t.PerRole[s.Role], t.PerParty[s.Party]
	t.Name = s.Name
	t.Roles, t.PerRole, t.PerParty = nil, nil, nil
	if t.Outputs != nil { // where an output may go is the party's to keep (Exports), not its part's
		for i := range t.Outputs.Parameters {
			t.Outputs.Parameters[i].To = nil
		}
		for i := range t.Outputs.Artifacts {
			t.Outputs.Artifacts[i].To = nil
		}
	}
	applyOverride(&t, role)
	applyOverride(&t, party)
	t.AdmissionTimeout = ""
	if t.Retries != nil {
		r := *t.Retries
		r.Backoff = nil
		t.Retries = &r
	}
	return t
}

// applyOverride changes t as o says: args and resources replaced, env
// added to (a variable of the same name replaced in place).
func applyOverride(t *apiv1.Task, o apiv1.TaskOverride) {
	if o.Args != nil {
		t.Args = slices.Clone(o.Args)
	}
	if o.Resources != nil {
		r := *o.Resources
		t.Resources = &r
	}
	for _, e := range o.Env {
		i := slices.IndexFunc(t.Env, func(v apiv1.EnvVar) bool { return v.Name == e.Name })
		if i < 0 {
			t.Env = append(t.Env, e)
		} else {
			t.Env[i] = e
		}
	}
}

// localDeps maps a share's dependencies to shares of the same party: a
// task the party has several shares of stands for all of them, one it has
// none of for its own dependencies, as far up as it takes (so a share
// still follows, and may read, every upstream share of its party).
func localDeps(up []string, deps, mine map[string][]string, seen map[string]bool) []string {
	var out []string
	for _, d := range up {
		if seen[d] {
			continue
		}
		seen[d] = true
		if names, ok := mine[d]; ok {
			out = append(out, names...)
		} else {
			out = append(out, localDeps(deps[d], deps, mine, seen)...)
		}
	}
	return out
}

// deepCopy is a copy of v that no change to v reaches, nor v any change
// to it.
func deepCopy[T any](v *T) (*T, error) {
	b, err := json.Marshal(v)
	if err == nil {
		var out T
		if err = json.Unmarshal(b, &out); err == nil {
			return &out, nil
		}
	}
	return nil, &apiv1.Error{Code: apiv1.CodeInternal, Message: fmt.Sprintf("cannot copy the federated workflow: %v", err)}
}

func noShare(wf *apiv1.Workflow, field, format string, args ...any) *apiv1.Error {
	return &apiv1.Error{
		Code: apiv1.CodeNoShare, Object: apiv1.KindWorkflow + "/" + wf.Metadata.Name, Field: field,
		Message: fmt.Sprintf(format, args...),
	}
}
