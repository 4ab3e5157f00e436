package workflow

import (
	"slices"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/template"
)

// A share may read an output parameter of a task its party runs no share
// of, when the parameter's to names a role the party fills. In the
// party's part such a reference, {{tasks.T.outputs.parameters.P}}, reads
// {{federation.T.P}}: the value the party fetches from the one share of T
// when the reading share starts.

// crossRefs rewrites, in place, the references of the part's task t
// (share s of party) to other parties' outputs, and lists them. mine
// holds the tasks the party has shares of.
func crossRefs(wf *apiv1.Workflow, t *apiv1.Task, mine map[string][]string) []apiv1.CrossInput {
	var out []apiv1.CrossInput
	rewrite := func(v *string) {
		*v = rewriteCross(*v, wf, mine, t.Name, &out)
	}
	fields := func(command, args []string, env []apiv1.EnvVar) {
		for i := range command {
			rewrite(&command[i])
		}
		for i := range args {
			rewrite(&args[i])
		}
		for i := range env {
			rewrite(&env[i].Value)
		}
	}
	fields(t.Command, t.Args, t.Env)
	rewrite(&t.WorkingDir)
	if tr := t.Train; tr != nil {
		fields(tr.Command, tr.Args, tr.Env)
	}
	return out
}

// rewriteCross is s with its references to outputs of tasks not in mine
// made {{federation.T.P}}, each added to out once.
func rewriteCross(s string, wf *apiv1.Workflow, mine map[string][]string, share string, out *[]apiv1.CrossInput) string {
	v, err := template.Expand(s, func(r template.Ref) (string, bool) {
		p := r.Path
		if len(p) != 5 || p[0] != "tasks" || p[2] != "outputs" || (p[3] != "parameters" && p[3] != "artifacts") || mine[p[1]] != nil {
			return "{{" + r.Raw + "}}", true
		}
		k := slices.IndexFunc(wf.Spec.Tasks, func(t apiv1.Task) bool { return t.Name == p[1] })
		if k < 0 {
			return "{{" + r.Raw + "}}", true
		}
		shares := Shares(wf.Spec.Federation, &wf.Spec.Tasks[k])
		if len(shares) != 1 {
			return "{{" + r.Raw + "}}", true // refused when the whole workflow is checked
		}
		in := apiv1.CrossInput{Share: share, Task: p[1], Param: p[4], Party: shares[0].Party, Role: shares[0].Role, Artifact: p[3] == "artifacts"}
		if !slices.Contains(*out, in) {
			*out = append(*out, in)
		}
		return "{{federation." + in.Key() + "}}", true
	})
	if err != nil {
		return s // a malformed template is reported by templates
	}
	return v
}

// CrossInputs lists what party's part of wf reads of other parties'
// shares: PartOf rewrites those references, and the party fetches each
// when the reading share starts.
func CrossInputs(wf *apiv1.Workflow, party string) []apiv1.CrossInput {
	if wf.Spec.Federation == nil {
		return nil
	}
	mine := map[string][]string{}
	var tasks []apiv1.Task
	for i := range wf.Spec.Tasks {
		for _, s := range Shares(wf.Spec.Federation, &wf.Spec.Tasks[i]) {
			if s.Party == party {
				mine[s.Task] = append(mine[s.Task], s.Name)
				t, err := deepCopy(&wf.Spec.Tasks[i])
				if err == nil {
					tasks = append(tasks, shareTask(*t, s))
				}
			}
		}
	}
	var out []apiv1.CrossInput
	for i := range tasks {
		out = append(out, crossRefs(wf, &tasks[i], mine)...)
	}
	return out
}

// CompilePart compiles a party's part, whose tasks may read the inputs
// PartOf made of other parties' outputs ({{federation.T.P}}).
func CompilePart(doc *Document, part *apiv1.Workflow, inputs []apiv1.CrossInput) (*Plan, error) {
	c := &checker{doc: doc, running: []string{part.Metadata.Name}, crossInputs: crossKeys(inputs)}
	p := c.workflow(part)
	if len(c.errs) > 0 {
		return nil, c.err()
	}
	return p, nil
}

func crossKeys(inputs []apiv1.CrossInput) map[string]bool {
	out := map[string]bool{}
	for _, in := range inputs {
		out[in.Share+"/"+in.Key()] = true
	}
	return out
}

// Exports lists the outputs of party's shares of wf that may leave the
// party, by SHARE.PARAM or SHARE.artifacts.NAME (the share's name in the
// part), with the roles they may go to.
func Exports(wf *apiv1.Workflow, party string) map[string][]string {
	out := map[string][]string{}
	if wf.Spec.Federation == nil {
		return out
	}
	for i := range wf.Spec.Tasks {
		t := &wf.Spec.Tasks[i]
		if t.Outputs == nil {
			continue
		}
		for _, s := range Shares(wf.Spec.Federation, t) {
			if s.Party != party {
				continue
			}
			for _, o := range t.Outputs.Parameters {
				if len(o.To) > 0 {
					out[s.Name+"."+o.Name] = slices.Clone(o.To)
				}
			}
			for _, o := range t.Outputs.Artifacts {
				if len(o.To) > 0 {
					out[s.Name+".artifacts."+o.Name] = slices.Clone(o.To)
				}
			}
		}
	}
	return out
}
