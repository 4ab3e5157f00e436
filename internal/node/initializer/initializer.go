// Package initializer is the node handler of a training job's dataset or
// model initializer: one process, kiln's own hidden initialize command,
// that fetches the storageUri into the node's output artifact (here) or
// the run's shared workspace (on a container backend) before the trainer,
// which depends on the node, starts. It runs once per job, whatever the
// trainer's nodes and restarts.
package initializer

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/fetch"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/workflow"
)

// What the initialize command reads from its environment.
const (
	// DirEnv is the directory it fetches into.
	DirEnv = "KILN_INITIALIZER_DIR"
	// TokenEnv holds the secretRef's value, sent as a bearer token.
	TokenEnv = "KILN_INITIALIZER_TOKEN"
)

// Exit codes of the initialize command, which Judge reads.
const (
	ExitNotFound    = 3
	ExitUnreachable = 4
	ExitFailed      = 5
)

// Command is the program that fetches: kiln itself, found on the PATH
// (this kiln's directory comes first locally; an image must hold it).
const Command = "kiln"

// Handler runs initializer nodes.
type Handler struct {
	// exeDir is the directory of the kiln executable, put first on the
	// PATH of local processes.
	exeDir string
	// exe is the kiln executable itself, run by its path where the
	// environment is this machine's (whatever the binary is named).
	exe string
}

var (
	_ node.Handler   = Handler{}
	_ node.Versioned = Handler{}
	_ node.Suspender = Handler{}
)

// New returns the initializer handler; exe is this kiln's executable.
func New(exe string) Handler {
	if exe == "" {
		return Handler{}
	}
	return Handler{exe: exe, exeDir: filepath.Dir(exe)}
}

// Kind implements node.Handler.
func (Handler) Kind() apiv1.NodeKind { return apiv1.NodeKindInitializer }

// Build implements node.Handler: kiln initialize NAME URI, writing to the
// node's output artifact NAME, or the workspace's NAME directory.
func (h Handler) Build(ctx context.Context, a *node.Attempt, spec *job.Spec) error {
	it := a.Task.Spec.Initialize
	vars := append([]apiv1.EnvVar(nil), it.Env...)
	if it.SecretRef != nil {
		vars = append(vars, apiv1.EnvVar{Name: TokenEnv, ValueFrom: &apiv1.EnvSource{Secret: it.SecretRef.Name}})
	}
	cmd, env, err := node.Prepare(ctx, a, []string{Command, "initialize", it.Name, uriOf(it)}, vars, spec)
	if err != nil {
		return err
	}
	out, err := a.Inputs.Expand("{{outputs.dir}}")
	if err != nil {
		return err
	}
	env = append(h.onPath(env), DirEnv+"="+filepath.Join(out, it.Name))
	if h.exe != "" && hasPath(env) && len(cmd) > 0 && cmd[0] == Command {
		cmd = append([]string{h.exe}, cmd[1:]...)
	}
	spec.Processes = []job.Process{{Command: cmd, Env: env}}
	spec.Workspace = &job.Workspace{Dirs: map[string]string{DirEnv: it.Name}}
	return nil
}

// onPath puts this kiln's directory first on a PATH the environment
// has: a local machine's. A pod's environment has none, and keeps its
// image's.
func (h Handler) onPath(env []string) []string {
	out := append([]string(nil), env...)
	for i, kv := range out {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok && h.exeDir != "" {
			out[i] = "PATH=" + h.exeDir + string(filepath.ListSeparator) + v
		}
	}
	return out
}

// hasPath reports whether env is a local machine's: a pod's has no PATH.
func hasPath(env []string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			return true
		}
	}
	return false
}

func uriOf(it *apiv1.InitializeTask) string {
	if it.StorageURI == nil {
		return ""
	}
	return *it.StorageURI
}

// Judge implements node.Handler: a failed fetch names the initializer,
// its URI and why. A source that does not exist will not appear on a
// retry.
func (Handler) Judge(t *workflow.Task, st *job.Status) node.Verdict {
	v := node.JudgeExit(st)
	if v.Code != apiv1.CodeExit || st.System || st.Signal != "" {
		return v
	}
	it := t.Spec.Initialize
	var why string
	switch st.ExitCode {
	case ExitNotFound:
		why, v.Permanent = "it does not exist (a missing file, or HTTP 404)", true
	case ExitUnreachable:
		why = "its server cannot be reached"
	case ExitFailed:
		why = "see kiln logs for why"
	default: // not the initialize command's own verdict
		v.Message = fmt.Sprintf("the %s initializer (%s): %s", it.Name, uriOf(it), v.Message)
		return v
	}
	v.Code = apiv1.CodeInitializer
	v.Message = fmt.Sprintf("the %s initializer could not fetch %s: %s; the trainer did not start", it.Name, uriOf(it), why)
	return v
}

// Suspends implements node.Suspender: a suspended TrainJob fetches
// nothing, as Trainer suspends its initializers with its trainer.
func (Handler) Suspends(*workflow.Task) bool { return true }

// Version implements node.Versioned: a local source by its content's
// digest, an http(s) one by its URI and the ETag or Last-Modified its
// server sends.
func (Handler) Version(ctx context.Context, a *node.Attempt, digest func(string) (string, error)) (version, why string) {
	uri, err := a.Inputs.Expand(uriOf(a.Task.Spec.Initialize))
	if err != nil {
		return "", "its storageUri cannot be expanded: " + err.Error()
	}
	s, err := fetch.Parse(uri)
	if err != nil {
		return "", err.Error()
	}
	if !s.Local() {
		return fetch.Version(ctx, s, "")
	}
	d, err := digest(s.Abs(a.Inputs.WorkingDir("")).Path)
	if err != nil {
		return "", "its storageUri cannot be read: " + err.Error()
	}
	return uri + " " + d, ""
}
