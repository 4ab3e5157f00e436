package app

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/backend/kube"
	"kiln.dev/kiln/internal/backend/local"
	"kiln.dev/kiln/internal/backend/slurm"
	"kiln.dev/kiln/internal/controller"
	"kiln.dev/kiln/internal/resource"
)

// Backend names.
const (
	BackendLocal      = local.Name
	BackendKubernetes = kube.Name
	BackendSlurm      = slurm.Name
)

// backendKind is how one kind of backend opens, and what it is.
type backendKind struct {
	// open builds the backend from cfg, on the prepared home, with the
	// pool the engine admits against.
	open func(ctx context.Context, cfg Config, home string) (backend.Backend, controller.Pool, error)
	// probe is a nil value of the backend's type: its capabilities, found
	// by type assertion, are known before one is opened (kiln validate).
	probe backend.Backend
}

// backends is every kind of backend, by the name --backend and the
// configuration file's backend field give it. Adding a backend is adding
// its entry here; the engine asks it only for capabilities.
var backends = map[string]backendKind{
	BackendLocal:      {open: openLocalKind, probe: (*local.Backend)(nil)},
	BackendKubernetes: {open: openKube, probe: (*kube.Backend)(nil)},
	BackendSlurm:      {open: openSlurm, probe: (*slurm.Backend)(nil)},
}

// BackendNames are the names of the backends kiln has, sorted.
func BackendNames() []string { return slices.Sorted(maps.Keys(backends)) }

// lookupBackend is the backend named name ("" is the local one), or a
// KLN-4002 naming the ones kiln has.
func lookupBackend(name string) (backendKind, error) {
	if name == "" {
		name = BackendLocal
	}
	k, ok := backends[name]
	if !ok {
		return k, &apiv1.Error{
			Code: apiv1.CodeUsage, Field: "backend",
			Message: fmt.Sprintf("unknown backend %q: use %s", name, strings.Join(BackendNames(), ", ")),
			Hint:    "set --backend, KILN_BACKEND or the configuration file's backend field to one of them",
		}
	}
	return k, nil
}

// BackendRunsImages reports whether the backend named name runs tasks in
// images (backend.Images), so that each task must name one; false for an
// unknown name.
func BackendRunsImages(name string) bool {
	k, err := lookupBackend(name)
	return err == nil && backend.Has[backend.Images](k.probe)
}

// openLocalKind starts (or finds) the local supervisor's backend: every
// engine on the home admits against the supervisor's ledger.
func openLocalKind(_ context.Context, cfg Config, home string) (backend.Backend, controller.Pool, error) {
	lb, err := openLocal(home, cfg.SupervisorCommand, cfg.Isolation)
	if err != nil {
		return nil, nil, err
	}
	return lb, lb.Pool(withDefaults(cfg.Pool)), nil
}

// clusterPool is the engine's pool on a cluster: unbounded, since the
// cluster's scheduler (and gang scheduler) decide what fits where.
var clusterPool = resource.Request{MilliCPU: 1 << 50, Memory: 1 << 62, GPU: 1 << 30}

// openKube connects to the cluster in cfg.Kube. The cluster's scheduler
// decides what fits, so the engine's pool is unbounded.
func openKube(ctx context.Context, cfg Config, _ string) (backend.Backend, controller.Pool, error) {
	cfg.Kube.Log = cfg.Log
	kb, err := kube.New(ctx, cfg.Kube)
	if err != nil {
		return nil, nil, err
	}
	return kb, resource.NewPool(clusterPool), nil
}

// openSlurm connects to the Slurm cluster in cfg.Slurm, keeping attempts'
// files under the home unless it names another shared directory. Slurm
// decides what fits, so the engine's pool is unbounded.
func openSlurm(ctx context.Context, cfg Config, home string) (backend.Backend, controller.Pool, error) {
	if cfg.Slurm.Dir == "" {
		cfg.Slurm.Dir = home
	}
	sb, err := slurm.New(ctx, cfg.Slurm)
	if err != nil {
		return nil, nil, err
	}
	return sb, resource.NewPool(clusterPool), nil
}

// openLocal starts (or finds) the local supervisor's backend.
func openLocal(home string, supervisor []string, iso local.Isolation) (*local.Backend, error) {
	if len(supervisor) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, &apiv1.Error{Code: apiv1.CodeSupervisor, Message: "finding the kiln executable: " + err.Error()}
		}
		supervisor = []string{exe, "supervise", "--home", home}
	}
	return local.New(local.Config{Home: home, SupervisorCommand: supervisor, Isolation: iso}), nil
}
