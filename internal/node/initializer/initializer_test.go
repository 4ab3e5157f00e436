package initializer_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/node/initializer"
	"kiln.dev/kiln/internal/node/nodetest"
	"kiln.dev/kiln/internal/workflow"
)

func compile(t *testing.T, uri string) *workflow.Task {
	t.Helper()
	return nodetest.Compile(t, `spec:
  tasks:
  - name: dataset-initializer
    initialize: {name: dataset, storageUri: "`+uri+`", secretRef: {name: hub-token}}
    outputs: {artifacts: [{name: dataset, path: dataset}]}
`)
}

func TestConformance(t *testing.T) {
	t.Parallel()
	nodetest.Run(t, initializer.New(""), compile(t, "data"))
}

func TestBuildRunsKilnInitializeIntoItsArtifact(t *testing.T) {
	t.Parallel()
	tk := compile(t, "https://example.com/d.csv")
	h := initializer.New("/opt/kiln/bin/kiln")
	spec := &job.Spec{}
	if err := h.Build(t.Context(), nodetest.Attempt(h, tk, 1, nil), spec); err != nil {
		t.Fatal(err)
	}
	p := spec.Processes[0]
	// Locally (an environment with a PATH) this very kiln runs, by its path,
	// whatever its file is named.
	if want := []string{"/opt/kiln/bin/kiln", "initialize", "dataset", "https://example.com/d.csv"}; !slices.Equal(p.Command, want) {
		t.Errorf("command = %q, want %q", p.Command, want)
	}
	if !slices.Contains(p.Env, "PATH=/opt/kiln/bin:/usr/bin") {
		t.Errorf("env %q does not put this kiln first on the PATH", p.Env)
	}
	if !slices.ContainsFunc(p.Env, func(kv string) bool {
		return strings.HasPrefix(kv, initializer.DirEnv+"=") && strings.HasSuffix(kv, "/dataset")
	}) {
		t.Errorf("env %q does not name the artifact directory", p.Env)
	}
	if !slices.Contains(spec.SecretEnv, initializer.TokenEnv) {
		t.Errorf("the secretRef is not a secret variable: %q", spec.SecretEnv)
	}
	if spec.Workspace == nil || spec.Workspace.Dirs[initializer.DirEnv] != "dataset" {
		t.Errorf("workspace = %+v, want %s at its dataset directory", spec.Workspace, initializer.DirEnv)
	}
}

func TestJudgeNamesTheInitializerAndTheURI(t *testing.T) {
	t.Parallel()
	tk := compile(t, "http://h/x.bin")
	h := initializer.New("")
	for code, want := range map[int]struct {
		why       string
		permanent bool
	}{
		initializer.ExitNotFound:    {"does not exist", true},
		initializer.ExitUnreachable: {"cannot be reached", false},
		initializer.ExitFailed:      {"see kiln logs", false},
	} {
		v := h.Judge(tk, &job.Status{State: job.StateExited, ExitCode: code})
		if v.Code != apiv1.CodeInitializer || v.Permanent != want.permanent ||
			!strings.Contains(v.Message, "dataset initializer could not fetch http://h/x.bin") || !strings.Contains(v.Message, want.why) {
			t.Errorf("exit %d = %+v, want KLN-3025 naming the initializer, the URI and %q", code, v, want.why)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	h := initializer.New("")
	digest := func(p string) (string, error) {
		if p == "/wd/data" {
			return "sha256:abc", nil
		}
		return "", errors.New("no such file")
	}
	version := func(uri string) (string, string) {
		return h.Version(context.Background(), attempt(t, h, uri), digest)
	}
	if v, why := version("data"); why != "" || v != "data sha256:abc" {
		t.Errorf("a relative path = %q %q, want its content digest, read from the job's directory", v, why)
	}
	if v, why := version("/elsewhere"); v != "" || !strings.Contains(why, "cannot be read") {
		t.Errorf("an unreadable path = %q %q, want a reason", v, why)
	}
	if _, why := version("http://127.0.0.1:1/x"); !strings.Contains(why, "cannot be checked") {
		t.Errorf("an unreachable server = %q, want a reason", why)
	}
}

func attempt(t *testing.T, h node.Handler, uri string) *node.Attempt {
	a := nodetest.Attempt(h, compile(t, uri), 1, nil)
	a.Inputs.(*nodetest.Inputs).Dir = "/wd"
	return a
}
