package command_test

import (
	"slices"
	"testing"

	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node/command"
	"kiln.dev/kiln/internal/node/nodetest"
)

const task = `spec:
  params: [{name: who}]
  tasks:
  - name: greet
    command: [echo, hello]
    args: ["{{params.who}}", "{{outputs.dir}}"]
    env: [{name: A, value: "{{params.who}}"}, {name: TOKEN, valueFrom: {secret: api}}]
    workingDir: sub
    outputs: {parameters: [{name: greeting}], artifacts: [{name: log, path: logs/out.txt}]}
    resources: {cpu: 500m, memory: 1Gi}
`

func TestConformance(t *testing.T) {
	t.Parallel()
	nodetest.Run(t, command.New(), nodetest.Compile(t, task))
}

func TestBuildExpandsOneProcess(t *testing.T) {
	t.Parallel()
	h, tk := command.New(), nodetest.Compile(t, task)
	spec := &job.Spec{}
	if err := h.Build(t.Context(), nodetest.Attempt(h, tk, 1, map[string]string{"who": "a b; rm -rf /"}), spec); err != nil {
		t.Fatal(err)
	}
	p := spec.Processes[0]
	if want := []string{"echo", "hello", "a b; rm -rf /", "<outputs.dir>"}; !slices.Equal(p.Command, want) {
		t.Errorf("command = %q, want %q: one argument per template, as given", p.Command, want)
	}
	if !slices.Contains(p.Env, "A=a b; rm -rf /") || !slices.Equal(spec.SecretEnv, []string{"TOKEN"}) {
		t.Errorf("env %q, secrets %q", p.Env, spec.SecretEnv)
	}
	if spec.WorkingDir != "/work/sub" || !slices.Equal(spec.Artifacts, []string{"logs/out.txt"}) || spec.Container.MilliCPU != 500 {
		t.Errorf("spec = %+v", spec)
	}
}

// The image is expanded as the command is: a param (or a map's item) may
// pick it.
func TestBuildExpandsTheImage(t *testing.T) {
	t.Parallel()
	h := command.New()
	tk := nodetest.Compile(t, "spec:\n  params: [{name: tag}]\n  tasks:\n  - {name: a, image: 'debian:{{params.tag}}', command: [echo]}\n")
	spec := &job.Spec{}
	if err := h.Build(t.Context(), nodetest.Attempt(h, tk, 1, map[string]string{"tag": "12.5"}), spec); err != nil {
		t.Fatal(err)
	}
	if spec.Container.Image != "debian:12.5" {
		t.Errorf("image = %q, want debian:12.5", spec.Container.Image)
	}
}
