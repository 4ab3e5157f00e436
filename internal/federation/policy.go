package federation

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/template"
)

// Share is one task of a party's part, as a policy checks it: the task
// as the part has it (perRole and perParty applied), its field path in
// the whole workflow, and what it asks of the pool in all.
type Share struct {
	Task  *apiv1.Task
	Field string
	Need  resource.Request
	// EnvFields names, by variable, the field of the whole workflow that
	// set it (a perRole or perParty one may); others are the task's own.
	EnvFields map[string]string
}

// CheckPolicy refuses the first share of party's part that pol (nil:
// nothing is allowed) does not allow, with KLN-7026 naming the rule. The
// command of each share is compared once params (the workflow's defaults
// under the run's values) are put in; a word that refers to anything else
// (an upstream output) is unknown here, and never matches a word of the
// policy.
func CheckPolicy(party string, pol *apiv1.PartyPolicy, shares []Share, params map[string]string) error {
	if pol == nil {
		pol = &apiv1.PartyPolicy{}
	}
	for _, s := range shares {
		if err := checkShare(party, pol, s, params); err != nil {
			return err
		}
	}
	return nil
}

func checkShare(party string, pol *apiv1.PartyPolicy, s Share, params map[string]string) error {
	t := s.Task
	command, args, env, image := t.Command, t.Args, t.Env, t.Image
	if t.Train != nil {
		command, args, env, image = t.Train.Command, t.Train.Args, append(slices.Clone(env), t.Train.Env...), t.Train.Image
	}
	refuse := func(field, rule, msg string) error {
		return &apiv1.Error{
			Code: apiv1.CodePolicy, Object: "party/" + party, Field: s.Field + field,
			Message: fmt.Sprintf("party %s's policy for this initiator (%s) refuses task %s: %s", party, rule, t.Name, msg),
			Hint:    "ask party " + party + " to allow it (kiln party add NAME --policy FILE at its server), or change the task",
		}
	}
	line := expandAll(append(slices.Clone(command), args...), params)
	if !slices.ContainsFunc(pol.Commands, func(c string) bool { return allows(c, line) }) {
		return refuse(".command", "commands", fmt.Sprintf("its command line %q is not one it allows (%s)", strings.Join(line, " "), listed(pol.Commands)))
	}
	wild := slices.Contains(pol.Commands, "*")
	if t.PodTemplate != nil && !wild {
		return refuse(".podTemplate", "commands", "a podTemplate can change what runs; only a policy that allows any command (\"*\") takes one")
	}
	if image != "" && !wild && !slices.Contains(pol.Images, image) && !slices.Contains(pol.Images, "*") {
		return refuse(".image", "images", fmt.Sprintf("image %q is not one it allows (%s)", image, listed(pol.Images)))
	}
	for k, e := range env {
		if e.ValueFrom != nil && !slices.Contains(pol.Secrets, e.ValueFrom.Secret) {
			field := fmt.Sprintf(".env[%d]", k)
			if f, ok := s.EnvFields[e.Name]; ok {
				field = f
			}
			return refuse(field+".valueFrom.secret", "secrets", fmt.Sprintf("it reads secret %q, which the policy does not name (%s)", e.ValueFrom.Secret, listed(pol.Secrets)))
		}
	}
	if m := pol.MaxResources; m != nil {
		if over, err := exceeds(s.Need, *m); err != nil || over != "" {
			if err != nil {
				return err
			}
			return refuse(".resources", "maxResources", fmt.Sprintf("it asks %s in all, more than the %s a share may", s.Need, over))
		}
	}
	return nil
}

// allows reports whether the policy's command line c is a prefix, word
// by word, of line.
func allows(c string, line []string) bool {
	if c == "*" {
		return true
	}
	words := strings.Fields(c)
	return len(words) > 0 && len(words) <= len(line) && slices.Equal(words, line[:len(words)])
}

// expandAll puts params into every word; a word that refers to anything
// else keeps its reference, which no policy word equals.
func expandAll(words []string, params map[string]string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		v, err := template.Expand(w, func(r template.Ref) (string, bool) {
			if len(r.Path) == 2 && r.Path[0] == "params" {
				v, ok := params[r.Path[1]]
				return v, ok
			}
			return "", false
		})
		if err != nil {
			v = w
		}
		out[i] = v
	}
	return out
}

func listed(list []string) string {
	if len(list) == 0 {
		return "it allows none"
	}
	return "it allows " + strings.Join(list, ", ")
}

// exceeds says which bound of most (set fields only) need is over, as
// "cpu 2"; "" if none.
func exceeds(need resource.Request, most apiv1.Resources) (string, error) {
	for _, f := range []struct {
		name, v string
		parse   func(string) (int64, error)
		have    int64
	}{
		{"cpu", string(most.CPU), resource.ParseCPU, need.MilliCPU},
		{"memory", string(most.Memory), resource.ParseBytes, need.Memory},
		{"gpu", string(most.GPU), resource.ParseCount, need.GPU},
	} {
		if f.v == "" {
			continue
		}
		n, err := f.parse(f.v)
		if err != nil {
			return "", err
		}
		if f.have > n {
			return f.name + " " + f.v, nil
		}
	}
	return "", nil
}

// CheckPolicyValid refuses a policy that cannot be read as meant: an
// empty command line, or a bound that is not a quantity.
func CheckPolicyValid(party string, pol *apiv1.PartyPolicy) error {
	if pol == nil {
		return nil
	}
	for k, c := range pol.Commands {
		if strings.TrimSpace(c) == "" {
			return &apiv1.Error{Code: apiv1.CodeRequired, Object: "party/" + party, Field: fmt.Sprintf("policy.commands[%d]", k), Message: "a command line is empty", Hint: "give the program and, if it must be fixed, its first arguments: /usr/bin/python3 /srv/fl/train.py"}
		}
	}
	if m := pol.MaxResources; m != nil {
		if _, err := exceeds(resource.Request{}, *m); err != nil {
			var coded *apiv1.Error
			if errors.As(err, &coded) {
				coded.Object, coded.Field = "party/"+party, "policy.maxResources"
			}
			return err
		}
	}
	return nil
}

// CheckOutput refuses, with KLN-7026, output param of task leaving the
// party unless its policy names it (TASK.PARAM, or "*"). field, if set,
// is where the workflow sends it.
func CheckOutput(party string, pol *apiv1.PartyPolicy, task, param, field string) error {
	if pol != nil && (slices.Contains(pol.Outputs, task+"."+param) || slices.Contains(pol.Outputs, "*")) {
		return nil
	}
	var outs []string
	if pol != nil {
		outs = pol.Outputs
	}
	return &apiv1.Error{
		Code: apiv1.CodePolicy, Object: "party/" + party, Field: field,
		Message: fmt.Sprintf("party %s's policy for this initiator (outputs) keeps output %s.%s at the party: %s", party, task, param, listed(outs)),
		Hint:    "ask party " + party + " to let it leave (outputs: [" + task + "." + param + "] in its policy for the initiator), or keep the reading task at that party",
	}
}
