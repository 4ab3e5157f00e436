package workflow

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// federation checks a workflow's spec.federation and, when it has one,
// makes the checker compile its tasks as federated tasks.
func (c *checker) federation(wf *apiv1.Workflow) {
	fed := wf.Spec.Federation
	if fed == nil {
		return
	}
	c.fed = fed
	c.fedRoles = strings.Join(slices.Sorted(maps.Keys(fed.Roles)), ", ")
	if len(c.running) > 1 {
		c.addHint(apiv1.CodeNotFederable, "spec.federation", "submit the federated workflow on its own",
			"workflow %q is federated: it cannot run as another workflow's subworkflow", wf.Metadata.Name)
	}
	if len(wf.Spec.OnExit) > 0 {
		c.add(apiv1.CodeNotFederable, "spec.onExit", "a federated workflow has no onExit tasks: every task runs at the parties")
	}
	if len(fed.Roles) == 0 {
		c.add(apiv1.CodeFederationRoles, "spec.federation.roles", "roles are required: map each role to the parties that fill it")
	}
	pairs := 0
	for _, role := range slices.Sorted(maps.Keys(fed.Roles)) {
		c.role("spec.federation.roles."+role, role, fed.Roles[role])
		pairs += max(1, len(fed.Roles[role]))
	}
	if pairs > maxFederationPairs {
		c.add(apiv1.CodeOutOfRange, "spec.federation.roles", "the roles list %d (role, party) pairs, out of range: at most %d", pairs, maxFederationPairs)
		c.fedTooBig = true
	}
	c.fedAdmission = c.duration("spec.federation.admissionTimeout", fed.AdmissionTimeout)
	c.fedParty = c.duration("spec.federation.partyTimeout", fed.PartyTimeout)
}

// role checks one role of spec.federation.roles and its parties.
func (c *checker) role(field, role string, parties []string) {
	if msgs := validation.IsDNS1123Label(role); len(msgs) > 0 {
		c.add(apiv1.CodeFederationRoles, field, "role %q is not a DNS-1123 label", role)
	}
	if len(parties) == 0 {
		c.add(apiv1.CodeFederationRoles, field, "role %q has no party: list the parties that fill it", role)
	}
	seen := make(map[string]bool, len(parties))
	for i, p := range parties {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case len(validation.IsDNS1123Label(p)) > 0:
			c.add(apiv1.CodeFederationRoles, f, "party %q is not a DNS-1123 label: name a party registered with kiln party add", p)
		case seen[p]:
			c.add(apiv1.CodeFederationRoles, f, "party %q fills role %q twice", p, role)
		}
		seen[p] = true
	}
}

// federate compiles t as a task of a federated workflow: out, compiled
// as t's kind, becomes a federated task that holds no room of its own.
// Outside a federated workflow it refuses the fields of one.
func (c *checker) federate(field string, t *apiv1.Task, out *Task) {
	switch {
	case c.inExit:
		return // refused as a whole by federation
	case c.fed == nil:
		c.notFederated(field, t)
		return
	}
	c.unfederable(field, t)
	tooMany := len(t.Roles) > maxFederationPairs
	if tooMany {
		c.add(apiv1.CodeOutOfRange, field+".roles", "task %q lists %d roles, out of range: at most %d", t.Name, len(t.Roles), maxFederationPairs)
	} else {
		c.taskRoles(field, t)
		c.overrides(field, t)
		c.outputsTo(field, t)
	}
	f := &FederatedTask{AdmissionTimeout: c.fedAdmission, PartyTimeout: c.fedParty}
	if !c.fedTooBig && !tooMany {
		f.Shares = Shares(c.fed, t)
		c.countShares(field, len(f.Shares))
	}
	if out.AdmissionTimeout > 0 {
		f.AdmissionTimeout = out.AdmissionTimeout
	}
	if f.AdmissionTimeout == 0 {
		f.AdmissionTimeout = DefaultFederationTimeout
	}
	if f.PartyTimeout == 0 {
		f.PartyTimeout = DefaultFederationTimeout
	}
	*out = Task{Spec: t, Kind: apiv1.NodeKindFederated, Timeout: out.Timeout, Retry: out.Retry, Trigger: out.Trigger, Federated: f}
}

// notFederated refuses roles, perRole and perParty on a task of a
// workflow that is not federated.
func (c *checker) notFederated(field string, t *apiv1.Task) {
	if len(t.Roles) > 0 {
		c.addHint(apiv1.CodeTaskRoles, field+".roles", "add spec.federation.roles to the workflow, or drop roles",
			"task %q lists roles, but the workflow has no spec.federation", t.Name)
	}
	if len(t.PerRole) > 0 {
		c.add(apiv1.CodeOverrideKey, field+".perRole", "perRole applies to the tasks of a federated workflow only")
	}
	if len(t.PerParty) > 0 {
		c.add(apiv1.CodeOverrideKey, field+".perParty", "perParty applies to the tasks of a federated workflow only")
	}
	if t.Outputs == nil {
		return
	}
	for i, o := range t.Outputs.Parameters {
		if len(o.To) > 0 {
			c.add(apiv1.CodeTaskRoles, fmt.Sprintf("%s.outputs.parameters[%d].to", field, i), "to names the roles of other parties that may read a parameter: a federated workflow's only")
		}
	}
	for i, o := range t.Outputs.Artifacts {
		if len(o.To) > 0 {
			c.add(apiv1.CodeTaskRoles, fmt.Sprintf("%s.outputs.artifacts[%d].to", field, i), "to names the roles of other parties that may read an artifact: a federated workflow's only")
		}
	}
}

// outputsTo checks the roles an output parameter may go to, and that
// its task runs at one party under one role: the parameter is that
// share's.
func (c *checker) outputsTo(field string, t *apiv1.Task) {
	if t.Outputs == nil {
		return
	}
	var sent []struct {
		field string
		to    []string
	}
	for i, o := range t.Outputs.Parameters {
		sent = append(sent, struct {
			field string
			to    []string
		}{fmt.Sprintf("%s.outputs.parameters[%d].to", field, i), o.To})
	}
	for i, o := range t.Outputs.Artifacts {
		sent = append(sent, struct {
			field string
			to    []string
		}{fmt.Sprintf("%s.outputs.artifacts[%d].to", field, i), o.To})
	}
	for _, o := range sent {
		if len(o.to) == 0 {
			continue
		}
		f := o.field
		for k, role := range o.to {
			if _, ok := c.fed.Roles[role]; !ok {
				c.add(apiv1.CodeUnknownRole, fmt.Sprintf("%s[%d]", f, k), "role %q is not one of spec.federation.roles (%s)", role, c.fedRoles)
			}
		}
		if n := len(Shares(c.fed, t)); n != 1 {
			c.addHint(apiv1.CodeCrossParty, f, "split the task so that the output comes from one share, or send it with kiln.federation",
				"task %q runs %d shares: an output that leaves its party must be one share's, so its task must run at one party under one role", t.Name, n)
		}
	}
}

// unfederable refuses what cannot run across parties.
func (c *checker) unfederable(field string, t *apiv1.Task) {
	// A list, not a map: the problems come in the same order every time.
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"forEach", t.ForEach != nil},
		{"dynamic", t.Dynamic != nil},
		{"workflow", t.Workflow != nil},
		{"gate", t.Gate != nil},
		{"sensor", t.Sensor != nil},
		{"initialize", t.Initialize != nil},
		{"cache", t.Cache != nil},
		{"depends", t.Depends != ""},
		{"when", t.When != ""},
		{"trigger", t.Trigger != "" && t.Trigger != apiv1.TriggerAllSucceeded},
	} {
		if f.set {
			c.add(apiv1.CodeNotFederable, field+"."+f.name, "%s cannot be used in a federated workflow: its tasks run across parties, all of them or none", f.name)
		}
	}
}

// taskRoles checks a federated task's roles.
func (c *checker) taskRoles(field string, t *apiv1.Task) {
	if len(t.Roles) == 0 {
		c.add(apiv1.CodeTaskRoles, field+".roles", "task %q lists no roles: every task of a federated workflow runs at the parties of the roles it lists", t.Name)
	}
	seen := make(map[string]bool, len(t.Roles))
	for i, role := range t.Roles {
		f := fmt.Sprintf("%s.roles[%d]", field, i)
		switch _, ok := c.fed.Roles[role]; {
		case seen[role]:
			c.add(apiv1.CodeTaskRoles, f, "role %q is listed twice", role)
		case !ok:
			c.add(apiv1.CodeUnknownRole, f, "role %q is not one of spec.federation.roles (%s)", role, c.fedRoles)
		}
		seen[role] = true
	}
}

// overrides checks a federated task's perRole and perParty.
func (c *checker) overrides(field string, t *apiv1.Task) {
	roles := distinct(t.Roles)
	var all []string
	for _, role := range roles {
		all = append(all, c.fed.Roles[role]...)
	}
	parties := distinct(all)
	for _, role := range slices.Sorted(maps.Keys(t.PerRole)) {
		f := field + ".perRole." + role
		if !slices.Contains(roles, role) {
			c.add(apiv1.CodeOverrideKey, f, "%q is not one of the task's roles (%s)", role, listOrNone(roles))
		}
		c.override(f, t.PerRole[role])
	}
	for _, party := range slices.Sorted(maps.Keys(t.PerParty)) {
		f := field + ".perParty." + party
		if !slices.Contains(parties, party) {
			c.add(apiv1.CodeOverrideKey, f, "%q is not a party of the task's roles (%s)", party, listOrNone(parties))
		}
		c.override(f, t.PerParty[party])
	}
}

// override checks what one role or party changes in a share.
func (c *checker) override(field string, o apiv1.TaskOverride) {
	c.env(field+".env", o.Env)
	if o.Resources != nil {
		c.request(field+".resources", o.Resources)
	}
}

// Bounds of a federation, so that compiling every party's part stays
// quick whatever the spec says.
const (
	// maxFederationPairs bounds the (role, party) pairs of
	// spec.federation.roles.
	maxFederationPairs = 256
	// maxShares bounds the shares of all the tasks of a workflow.
	maxShares = 10_000
)

// countShares adds n shares to the workflow's, and refuses the task
// whose shares pass maxShares.
func (c *checker) countShares(field string, n int) {
	c.shares += n
	if c.shares > maxShares && c.shares-n <= maxShares {
		c.add(apiv1.CodeOutOfRange, field+".roles", "the tasks so far have %d shares in all, out of range: a federated workflow has at most %d", c.shares, maxShares)
	}
}

// listOrNone lists names, or says there are none.
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "it has none"
	}
	return strings.Join(names, ", ")
}
