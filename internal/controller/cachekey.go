package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/cache"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/template"
)

// cacheKeyVersion changes when what a key covers changes, so older
// entries are not reused by mistake.
const cacheKeyVersion = 1

// cacheKey is the key of node i's result: the digest of the attempt its
// handler builds, with the run's own names and places left out and each
// input artifact replaced by its content's digest, and of the project
// and the task's cache version. why says why the node cannot be cached
// here (an input artifact this process cannot read); err that its
// attempt cannot be built.
func (res *results) cacheKey(ctx context.Context, rs *runState, i int) (key, why string, err error) {
	k, t := rs.kinds[i], &rs.plan.Tasks[i]
	ki := &keyInputs{cfg: res.cfg, in: newInputs(res.cfg, rs, i, rs.attemptID(i, 1))}
	a := &node.Attempt{ID: job.AttemptID{Run: "run", Node: "task", Number: 1}, Task: t, Inputs: ki, Dir: "/attempt"}
	if k.networked != nil {
		hosts, ports := k.networked.Network(t)
		a.Network = placeholderNetwork(hosts, ports)
	}
	spec := &job.Spec{}
	if err := k.Build(ctx, a, spec); err != nil {
		return "", "", err
	}
	_, readable := backend.As[backend.HostOutputs](res.cfg.Backend)
	source := ""
	if k.versioned != nil {
		if source, why = k.versioned.Version(ctx, a, res.cfg.Cache.Digest); why != "" {
			return "", why, nil
		}
	}
	switch {
	case ki.unreadable != "":
		return "", ki.unreadable, nil
	case len(spec.Artifacts) > 0 && !readable:
		return "", "this backend keeps output artifacts where kiln cannot store them, so a task that writes artifacts is not cached here", nil
	}
	// What does not decide the result: the attempt's name, what it takes
	// from the machine, which variables are secret.
	spec.ID, spec.SecretEnv, spec.Project = job.AttemptID{}, nil, ""
	spec.Container.MilliCPU, spec.Container.Memory, spec.Container.GPU, spec.Container.ScheduleTimeout = 0, 0, 0, 0
	spec.Container.PodGroup = nil
	key, err = cache.KeyOf(struct {
		V                      int
		Project, Version, Kind string
		Spec                   *job.Spec
		Source                 string `json:",omitempty"`
	}{cacheKeyVersion, projectOf(rs.run), t.Cache.Version, string(t.Kind), spec, source})
	return key, "", err
}

// placeholderNetwork stands for the hosts and ports an attempt meets on,
// which differ from attempt to attempt and do not decide its result.
func placeholderNetwork(hosts, ports int) job.Network {
	n := job.Network{Hosts: make([]string, hosts), Ports: make([]int, ports)}
	for h := range n.Hosts {
		n.Hosts[h] = "host-" + strconv.Itoa(h)
	}
	for p := range n.Ports {
		n.Ports[p] = 1 + p
	}
	return n
}

// keyInputs resolves a node's inputs as its cache key sees them: input
// artifacts by the digest of their content, secrets by the digest of
// their value, and the attempt's own number and directories by name.
type keyInputs struct {
	cfg        *Config
	in         *inputs
	unreadable string // why an input artifact could not be read
}

var _ node.Inputs = (*keyInputs)(nil)

// Expand implements node.Inputs.
func (k *keyInputs) Expand(s string) (string, error) {
	return template.Expand(s, k.lookup)
}

func (k *keyInputs) lookup(ref template.Ref) (string, bool) {
	p := ref.Path
	switch {
	case ref.Raw == "outputs.dir" || ref.Raw == "task.attempt" || ref.Raw == "task.retries":
		return "{{" + ref.Raw + "}}", true
	case len(p) == 5 && p[0] == "tasks" && p[2] == "outputs" && p[3] == "artifacts":
		path, ok := k.in.lookup(ref)
		if !ok {
			return "", false
		}
		if _, readable := backend.As[backend.HostOutputs](k.cfg.Backend); !readable {
			k.unreadable = fmt.Sprintf("its input artifact {{%s}} is kept where kiln cannot read it", ref.Raw)
			return path, true
		}
		d, err := k.cfg.Cache.Digest(path)
		if err != nil {
			k.unreadable = fmt.Sprintf("its input artifact {{%s}} cannot be read: %v", ref.Raw, err)
			return path, true
		}
		return "artifact:" + d, true
	case len(p) == 6 && p[0] == "tasks" && p[2] == "outputs" && p[3] == "artifacts":
		path, ok := k.in.lookup(ref)
		if ok {
			k.unreadable = fmt.Sprintf("its input {{%s}} is a directory of links to a map's artifacts, which the cache does not hash", ref.Raw)
		}
		return path, ok
	}
	return k.in.lookup(ref)
}

// Env implements node.Inputs: the task's own variables only (not the
// engine's environment), secrets by digest.
func (k *keyInputs) Env(ctx context.Context, vars []apiv1.EnvVar) (env, secrets []string, err error) {
	for _, e := range vars {
		v, err := k.value(ctx, e)
		if err != nil {
			return nil, nil, err
		}
		env = append(env, e.Name+"="+v)
	}
	return env, nil, nil
}

func (k *keyInputs) value(ctx context.Context, e apiv1.EnvVar) (string, error) {
	if e.ValueFrom == nil {
		return k.Expand(e.Value)
	}
	v, err := k.in.value(ctx, e)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(v))
	return "secret:sha256:" + hex.EncodeToString(sum[:]), nil
}

// WorkingDir implements node.Inputs.
func (k *keyInputs) WorkingDir(dir string) string { return k.in.WorkingDir(dir) }
