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
	for _, role := range slices.Sorted(maps.Keys(fed.Roles)) {
		c.role("spec.federation.roles."+role, role, fed.Roles[role])
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
	for i, p := range parties {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case len(validation.IsDNS1123Label(p)) > 0:
			c.add(apiv1.CodeFederationRoles, f, "party %q is not a DNS-1123 label: name a party registered with kiln party add", p)
		case slices.Contains(parties[:i], p):
			c.add(apiv1.CodeFederationRoles, f, "party %q fills role %q twice", p, role)
		}
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
	c.taskRoles(field, t)
	c.overrides(field, t)
	f := &FederatedTask{Shares: Shares(c.fed, t), AdmissionTimeout: c.fedAdmission, PartyTimeout: c.fedParty}
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
	for i, role := range t.Roles {
		f := fmt.Sprintf("%s.roles[%d]", field, i)
		switch _, ok := c.fed.Roles[role]; {
		case slices.Contains(t.Roles[:i], role):
			c.add(apiv1.CodeTaskRoles, f, "role %q is listed twice", role)
		case !ok:
			c.add(apiv1.CodeUnknownRole, f, "role %q is not one of spec.federation.roles (%s)", role, strings.Join(slices.Sorted(maps.Keys(c.fed.Roles)), ", "))
		}
	}
}

// overrides checks a federated task's perRole and perParty.
func (c *checker) overrides(field string, t *apiv1.Task) {
	var parties []string
	for _, role := range t.Roles {
		parties = append(parties, c.fed.Roles[role]...)
	}
	for _, role := range slices.Sorted(maps.Keys(t.PerRole)) {
		f := field + ".perRole." + role
		if !slices.Contains(t.Roles, role) {
			c.add(apiv1.CodeOverrideKey, f, "%q is not one of the task's roles (%s)", role, strings.Join(t.Roles, ", "))
		}
		c.override(f, t.PerRole[role])
	}
	for _, party := range slices.Sorted(maps.Keys(t.PerParty)) {
		f := field + ".perParty." + party
		if !slices.Contains(parties, party) {
			c.add(apiv1.CodeOverrideKey, f, "%q is not a party of the task's roles (%s)", party, strings.Join(distinct(parties), ", "))
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
