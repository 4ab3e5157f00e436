package workflow

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/template"
)

// parts checks what the parties' parts of a federated workflow must be:
// the names its shares take, the outputs each party can read, and that
// every part compiles as any workflow does.
func (c *checker) parts(p *Plan) {
	if c.fed == nil || len(c.running) > 1 || c.fedTooBig || c.shares > maxShares {
		return
	}
	c.shareNames(p)
	c.crossParty(p)
	if len(c.errs) == 0 {
		c.compileParts(p)
	}
}

// shareNames refuses a share whose name in its party's part is taken.
func (c *checker) shareNames(p *Plan) {
	taken := map[[2]string]string{} // (party, name) → the task of the share that has it
	for i, t := range p.Tasks {
		if t.Federated == nil {
			continue
		}
		field := fmt.Sprintf("spec.tasks[%d].roles", i)
		for _, s := range t.Federated.Shares {
			key := [2]string{s.Party, s.Name}
			if other, ok := taken[key]; ok && other != s.Task {
				c.add(apiv1.CodeShareName, field, "at party %q the share of task %q as %s is named %q, as task %q's share is there",
					s.Party, s.Task, s.Role, s.Name, other)
			} else if len(s.Name) > validation.DNS1123LabelMaxLength {
				c.add(apiv1.CodeShareName, field, "at party %q the share of task %q as %s is named %q, longer than %d characters",
					s.Party, s.Task, s.Role, s.Name, validation.DNS1123LabelMaxLength)
			}
			taken[key] = s.Task
		}
	}
}

// scoped is a templated field of a federated task and the parties whose
// shares expand it.
type scoped struct {
	field, value string
	parties      []string
}

// crossParty refuses a template that reads an upstream task's outputs
// at a party that has no share of that task under the task's own name.
func (c *checker) crossParty(p *Plan) {
	roles := map[string]map[string][]string{} // task → party → the roles of its shares there
	for _, t := range p.Tasks {
		if t.Federated == nil {
			continue
		}
		m := map[string][]string{}
		for _, s := range t.Federated.Shares {
			m[s.Party] = append(m[s.Party], s.Role)
		}
		roles[t.Spec.Name] = m
	}
	for i, t := range p.Tasks {
		if t.Federated == nil {
			continue
		}
		for _, s := range federatedStrings(fmt.Sprintf("spec.tasks[%d]", i), t.Spec, t.Federated) {
			c.readsAtParties(s, roles, p)
		}
	}
}

// readsAtParties checks the references of one templated field.
func (c *checker) readsAtParties(s scoped, roles map[string]map[string][]string, p *Plan) {
	refs, _ := template.Refs(s.value) // a malformed template is reported by templates
	for _, r := range refs {
		if len(r.Path) != 5 || r.Path[0] != "tasks" || roles[r.Path[1]] == nil {
			continue
		}
		var none, several []string
		for _, party := range s.parties {
			switch n := len(roles[r.Path[1]][party]); {
			case n == 0 && !c.mayReadAcross(r, party, p):
				none = append(none, party)
			case n > 1:
				several = append(several, party+" (as "+strings.Join(roles[r.Path[1]][party], " and ")+")")
			}
		}
		if len(none) > 0 {
			c.addHint(apiv1.CodeCrossParty, s.field, "an output crosses parties when its task declares to: [ROLE] for it (outputs.parameters[].to, outputs.artifacts[].to), and the party that has it allows it in its policy",
				"{{%s}}: task %q has no share at %s %s, which therefore cannot read its outputs",
				r.Raw, r.Path[1], plural(len(none), "party", "parties"), strings.Join(none, ", "))
		}
		if len(several) > 0 {
			c.add(apiv1.CodeCrossParty, s.field, "{{%s}}: task %q runs at %s %s under several roles, so its shares there are named %s-<role>, not %s",
				r.Raw, r.Path[1], plural(len(several), "party", "parties"), strings.Join(several, ", "), r.Path[1], r.Path[1])
		}
	}
}

// mayReadAcross reports whether party may read r, an output parameter of
// a task it has no share of: the parameter's to names a role the party
// fills.
func (c *checker) mayReadAcross(r template.Ref, party string, p *Plan) bool {
	up, ok := p.Index[r.Path[1]]
	if !ok {
		return false
	}
	to := outputTo(p.Tasks[up].Spec, r.Path[3], r.Path[4])
	return slices.ContainsFunc(to, func(role string) bool { return slices.Contains(c.fed.Roles[role], party) })
}

// outputTo is the to of t's output of kind (parameters, artifacts) and
// name: the roles it may go to at other parties; nil if it stays.
func outputTo(t *apiv1.Task, kind, name string) []string {
	if t.Outputs == nil {
		return nil
	}
	switch kind {
	case "parameters":
		if k := slices.IndexFunc(t.Outputs.Parameters, func(o apiv1.OutputParameter) bool { return o.Name == name }); k >= 0 {
			return t.Outputs.Parameters[k].To
		}
	case "artifacts":
		if k := slices.IndexFunc(t.Outputs.Artifacts, func(o apiv1.Artifact) bool { return o.Name == name }); k >= 0 {
			return t.Outputs.Artifacts[k].To
		}
	}
	return nil
}

// plural is one or many, by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// federatedStrings lists the templated fields of federated task t, field
// at base, each with the parties whose shares expand it.
func federatedStrings(base string, t *apiv1.Task, f *FederatedTask) []scoped {
	all := f.Parties()
	out := taskStrings(base, t.Command, t.Args, t.Env, all)
	out = append(out, scoped{base + ".workingDir", t.WorkingDir, all})
	if tr := t.Train; tr != nil {
		out = append(out, taskStrings(base+".train", tr.Command, tr.Args, tr.Env, all)...)
	}
	for _, role := range slices.Sorted(maps.Keys(t.PerRole)) {
		var parties []string
		for _, s := range f.Shares {
			if s.Role == role {
				parties = append(parties, s.Party)
			}
		}
		o := t.PerRole[role]
		out = append(out, taskStrings(base+".perRole."+role, nil, o.Args, o.Env, parties)...)
	}
	for _, party := range slices.Sorted(maps.Keys(t.PerParty)) {
		o := t.PerParty[party]
		out = append(out, taskStrings(base+".perParty."+party, nil, o.Args, o.Env, []string{party})...)
	}
	return out
}

// taskStrings lists command, args and env values, field at base.
func taskStrings(base string, command, args []string, env []apiv1.EnvVar, parties []string) []scoped {
	var out []scoped
	for i, s := range command {
		out = append(out, scoped{fmt.Sprintf("%s.command[%d]", base, i), s, parties})
	}
	for i, s := range args {
		out = append(out, scoped{fmt.Sprintf("%s.args[%d]", base, i), s, parties})
	}
	for i, e := range env {
		out = append(out, scoped{fmt.Sprintf("%s.env[%d].value", base, i), e.Value, parties})
	}
	return out
}

// compileParts compiles every party's part as the party will, and
// reports its problems at the federated task they come from.
func (c *checker) compileParts(p *Plan) {
	for _, party := range planParties(p) {
		part, refs, err := PartOf(p.Workflow, party)
		if err != nil {
			c.errs = append(c.errs, err)
			continue
		}
		sub := &checker{
			doc: c.doc, runtimes: c.runtimes, lib: c.lib, stored: c.stored, running: []string{part.Metadata.Name},
			crossInputs: crossKeys(CrossInputs(p.Workflow, party)), uncapped: true,
		}
		sub.workflow(part)
		for _, e := range sub.errs {
			c.errs = append(c.errs, inPart(e, party, refs, p.Index))
		}
	}
}

// planParties lists the parties that run a share of p, sorted.
func planParties(p *Plan) []string {
	var out []string
	for _, t := range p.Tasks {
		if t.Federated != nil {
			out = append(out, t.Federated.Parties()...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

var partTask = regexp.MustCompile(`^spec\.tasks\[(\d+)\]`)

// inPart names a problem of party's part at the task of the federated
// workflow its share comes from.
func inPart(err error, party string, refs []apiv1.ShareRef, index map[string]int) error {
	var e *apiv1.Error
	if !errors.As(err, &e) {
		return err
	}
	out := *e
	out.Message = fmt.Sprintf("in party %s's part: %s", party, e.Message)
	if m := partTask.FindStringSubmatch(e.Field); m != nil {
		var k int
		if _, serr := fmt.Sscan(m[1], &k); serr == nil && k < len(refs) {
			out.Field = fmt.Sprintf("spec.tasks[%d]", index[refs[k].Task]) + e.Field[len(m[0]):]
			out.Message = fmt.Sprintf("in party %s's part, as task %s: %s", party, refs[k].Name, e.Message)
		}
	}
	return &out
}
