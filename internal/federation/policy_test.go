package federation

import (
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
)

func TestAPolicyAllowsWhatItNamesAndNothingElse(t *testing.T) {
	t.Parallel()
	pol := &apiv1.PartyPolicy{
		Commands:     []string{"/usr/bin/python3 /srv/fl/train.py", "/bin/true"},
		Secrets:      []string{"data-key"},
		Images:       []string{"ghcr.io/org/fl:1"},
		MaxResources: &apiv1.Resources{CPU: "2", Memory: "1Gi"},
	}
	params := map[string]string{"script": "/srv/fl/train.py", "evil": "/tmp/x.py"}
	secret := func(name string) []apiv1.EnvVar {
		return []apiv1.EnvVar{{Name: "KEY", ValueFrom: &apiv1.EnvSource{Secret: name}}}
	}
	for _, c := range []struct {
		what string
		task apiv1.Task
		need resource.Request
		ok   bool
	}{
		{"its command, args after it", apiv1.Task{Command: []string{"/usr/bin/python3", "{{params.script}}", "--rounds", "3"}}, resource.Request{MilliCPU: 500}, true},
		{"its command through args", apiv1.Task{Command: []string{"/usr/bin/python3"}, Args: []string{"/srv/fl/train.py"}}, resource.Request{}, true},
		{"another script", apiv1.Task{Command: []string{"/usr/bin/python3", "{{params.evil}}"}}, resource.Request{}, false},
		{"the program alone", apiv1.Task{Command: []string{"/usr/bin/python3"}}, resource.Request{}, false},
		{"a word that is not a param", apiv1.Task{Command: []string{"/usr/bin/python3", "{{tasks.a.outputs.parameters.p}}"}}, resource.Request{}, false},
		{"no command", apiv1.Task{}, resource.Request{}, false},
		{"a secret it names", apiv1.Task{Command: []string{"/bin/true"}, Env: secret("data-key")}, resource.Request{}, true},
		{"a secret it does not name", apiv1.Task{Command: []string{"/bin/true"}, Env: secret("other")}, resource.Request{}, false},
		{"an image it names", apiv1.Task{Command: []string{"/bin/true"}, Image: "ghcr.io/org/fl:1"}, resource.Request{}, true},
		{"another image", apiv1.Task{Command: []string{"/bin/true"}, Image: "evil:latest"}, resource.Request{}, false},
		{"a podTemplate", apiv1.Task{Command: []string{"/bin/true"}, PodTemplate: &apiv1.PodTemplate{}}, resource.Request{}, false},
		{"too much memory", apiv1.Task{Command: []string{"/bin/true"}}, resource.Request{Memory: 2 << 30}, false},
		{"a training job's command", apiv1.Task{Train: &apiv1.TrainTask{Trainer: apiv1.Trainer{Command: []string{"/bin/true"}}}}, resource.Request{MilliCPU: 2000}, true},
	} {
		err := CheckPolicy("bob", pol, []Share{{Task: &c.task, Field: "spec.tasks[0]", Need: c.need}}, params)
		if (err == nil) != c.ok || (err != nil && apiv1.CodeOf(err) != apiv1.CodePolicy) {
			t.Errorf("%s: %v; want allowed %t", c.what, err, c.ok)
		}
	}
	if err := CheckPolicy("bob", nil, []Share{{Task: &apiv1.Task{Command: []string{"/bin/true"}}}}, nil); apiv1.CodeOf(err) != apiv1.CodePolicy {
		t.Errorf("no policy: %v; want everything refused", err)
	}
	open := &apiv1.PartyPolicy{Commands: []string{"*"}}
	if err := CheckPolicy("bob", open, []Share{{Task: &apiv1.Task{Command: []string{"sh"}, Image: "any", PodTemplate: &apiv1.PodTemplate{}}}}, nil); err != nil {
		t.Errorf("an open policy refused: %v", err)
	}
	if err := CheckPolicyValid("bob", &apiv1.PartyPolicy{MaxResources: &apiv1.Resources{CPU: "lots"}}); err == nil {
		t.Errorf("a policy with a bound that is no quantity was taken")
	}
}
