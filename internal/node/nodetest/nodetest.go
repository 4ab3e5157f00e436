// Package nodetest is the conformance suite of node handlers: what the
// engine relies on of every kind of node. A handler's own test calls Run
// with nodes of its kind, compiled as the engine compiles them.
package nodetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/template"
	"kiln.dev/kiln/internal/workflow"
)

// Run checks handler h against task, a node of its kind.
func Run(t *testing.T, h node.Handler, task *workflow.Task) {
	t.Helper()
	t.Run("its kind is the node's and a registry takes it once", func(t *testing.T) { t.Parallel(); testKind(t, h, task) })
	t.Run("build is deterministic and names every process apart", func(t *testing.T) { t.Parallel(); testBuild(t, h, task) })
	t.Run("build fills in the attempt's own fields", func(t *testing.T) { t.Parallel(); testAttemptFields(t, h, task) })
	t.Run("judge follows what the backend saw", func(t *testing.T) { t.Parallel(); testJudge(t, h, task) })
}

// Compile compiles spec, the spec section of a Workflow named wf, as the
// engine does, and returns its first task.
func Compile(t *testing.T, spec string) *workflow.Task {
	t.Helper()
	docs, err := workflow.Read("wf.yaml", strings.NewReader("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: wf}\n"+spec))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := workflow.DecodeWorkflow(&docs[0])
	if err != nil {
		t.Fatal(err)
	}
	plan, err := workflow.Compile(&docs[0], wf, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &plan.Tasks[0]
}

// Attempt is attempt n of task with inputs that resolve params from
// params, and every other reference to its own text in angle brackets.
func Attempt(h node.Handler, task *workflow.Task, n int, params map[string]string) *node.Attempt {
	a := &node.Attempt{
		ID:     job.AttemptID{Run: "run-aaaaa", Node: task.Spec.Name, Number: n},
		Task:   task,
		Inputs: &Inputs{Params: params, Base: []string{"PATH=/usr/bin"}, Dir: "/work"},
		Dir:    fmt.Sprintf("/home/runs/run-aaaaa/%s/%d", task.Spec.Name, n),
	}
	if nw, ok := h.(node.Networked); ok {
		hosts, ports := nw.Network(task)
		for i := range hosts {
			a.Network.Hosts = append(a.Network.Hosts, fmt.Sprintf("host-%d", i))
		}
		for i := range ports {
			a.Network.Ports = append(a.Network.Ports, 30000+i)
		}
	}
	return a
}

// Inputs is a node.Inputs of fixed values, for tests of pure logic.
type Inputs struct {
	Params map[string]string
	Base   []string
	Dir    string
}

// Expand implements node.Inputs.
func (in *Inputs) Expand(s string) (string, error) {
	return template.Expand(s, func(r template.Ref) (string, bool) {
		if v, ok := in.Params[strings.TrimPrefix(r.Raw, "params.")]; ok && strings.HasPrefix(r.Raw, "params.") {
			return v, true
		}
		return "<" + r.Raw + ">", true
	})
}

// Env implements node.Inputs; a secret's value is "secret:<name>".
func (in *Inputs) Env(_ context.Context, vars []apiv1.EnvVar) (env, secrets []string, err error) {
	env = append([]string(nil), in.Base...)
	for _, v := range vars {
		value, err := in.Expand(v.Value)
		if err != nil {
			return nil, nil, err
		}
		if v.ValueFrom != nil {
			value, secrets = "secret:"+v.ValueFrom.Secret, append(secrets, v.Name)
		}
		env = append(env, v.Name+"="+value)
	}
	return env, secrets, nil
}

// WorkingDir implements node.Inputs.
func (in *Inputs) WorkingDir(dir string) string {
	if dir == "" || strings.HasPrefix(dir, "/") {
		return in.Dir + dir
	}
	return in.Dir + "/" + dir
}

func build(t *testing.T, h node.Handler, task *workflow.Task, n int) *job.Spec {
	t.Helper()
	spec := &job.Spec{}
	if err := h.Build(t.Context(), Attempt(h, task, n, map[string]string{}), spec); err != nil {
		t.Fatalf("Build: %v", err)
	}
	return spec
}

func testKind(t *testing.T, h node.Handler, task *workflow.Task) {
	if h.Kind() == "" || h.Kind() != task.Kind {
		t.Errorf("Kind() = %q, want the node's kind %q", h.Kind(), task.Kind)
	}
	if _, err := node.NewRegistry(h, h); err == nil {
		t.Error("a registry took the same kind twice")
	}
}

func testBuild(t *testing.T, h node.Handler, task *workflow.Task) {
	first, again := build(t, h, task, 1), build(t, h, task, 1)
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("Build of the same attempt twice (-first +again):\n%s", diff)
	}
	if len(first.Processes) == 0 {
		t.Fatal("Build made no process")
	}
	seen := map[string]bool{}
	for _, p := range first.Processes {
		if len(p.Command) == 0 || p.Command[0] == "" {
			t.Errorf("process %q has no command", p.Name)
		}
		if seen[p.Name] {
			t.Errorf("two processes are named %q", p.Name)
		}
		seen[p.Name] = true
		if p.Host < 0 || (len(first.Processes) > 1 && p.Name == "") {
			t.Errorf("process %q: host %d; a gang's processes need names", p.Name, p.Host)
		}
	}
	if first.Leader != "" && !seen[first.Leader] {
		t.Errorf("leader %q is none of the processes", first.Leader)
	}
}

func testAttemptFields(t *testing.T, h node.Handler, task *workflow.Task) {
	spec := build(t, h, task, 3)
	if want := (job.AttemptID{Run: "run-aaaaa", Node: task.Spec.Name, Number: 3}); spec.ID != want {
		t.Errorf("spec ID = %v, want %v", spec.ID, want)
	}
	if diff := cmp.Diff(task.Spec.Outputs.Params(), spec.Outputs); diff != "" {
		t.Errorf("outputs (-task +spec):\n%s", diff)
	}
	for _, p := range spec.Processes {
		if !hasPrefix(p.Env, "PATH=/usr/bin") {
			t.Errorf("process %q does not start from the engine's environment", p.Name)
		}
	}
}

func hasPrefix(env []string, kv string) bool {
	for _, e := range env {
		if e == kv {
			return true
		}
	}
	return false
}

func testJudge(t *testing.T, h node.Handler, task *workflow.Task) {
	cases := map[string]struct {
		st   job.Status
		want node.Verdict
	}{
		"exit 0 succeeds with its outputs": {
			st:   job.Status{State: job.StateExited, Outputs: map[string]string{"x": "1"}},
			want: node.Verdict{Phase: apiv1.PhaseSucceeded, Outputs: map[string]string{"x": "1"}},
		},
		"a missing command never gets better": {
			st:   job.Status{State: job.StateExited, ExitCode: -1, NotFound: true, StartError: "no such command"},
			want: node.Verdict{Phase: apiv1.PhaseFailed, Code: apiv1.CodeCommandNotFound, Permanent: true},
		},
		"a missing output never gets better": {
			st:   job.Status{State: job.StateExited, OutputError: "output x was not written"},
			want: node.Verdict{Phase: apiv1.PhaseFailed, Code: apiv1.CodeOutput, Permanent: true},
		},
		"the backend's code stands": {
			st:   job.Status{State: job.StateExited, ExitCode: -1, Code: string(apiv1.CodeEvicted), System: true},
			want: node.Verdict{Phase: apiv1.PhaseFailed, Code: apiv1.CodeEvicted, System: true},
		},
		"a process the machine killed is a system failure": {
			st:   job.Status{State: job.StateExited, ExitCode: -1, Signal: "SIGKILL", System: true},
			want: node.Verdict{Phase: apiv1.PhaseFailed, Code: apiv1.CodeExit, System: true},
		},
	}
	for name, tc := range cases {
		got := h.Judge(task, &tc.st)
		got.Message = ""
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	failed := h.Judge(task, &job.Status{State: job.StateExited, ExitCode: 7})
	if failed.Phase != apiv1.PhaseFailed || failed.Code != apiv1.CodeExit || !strings.Contains(failed.Message, "7") {
		t.Errorf("exit 7 = %+v, want Failed with %s saying 7", failed, apiv1.CodeExit)
	}
}
