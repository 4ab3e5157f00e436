package training

import (
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Lookup finds a runtime stored with kiln apply: the project's
// TrainingRuntime (kind apiv1.KindTrainingRuntime) or a
// ClusterTrainingRuntime, by name. It returns nil and no error when
// there is none; the runtime it returns carries its project and version
// in its Status. An error is the store's.
type Lookup func(kind, name string) (*apiv1.TrainingRuntime, error)

// Runtimes resolves the runtime a train task names. With no kind asked
// for, a name is looked up in this order, the first found winning: a
// TrainingRuntime of the submitted files, the project's stored
// TrainingRuntime, a stored ClusterTrainingRuntime, a built-in one. A
// kind asked for looks at that kind alone (the files and the project's
// for TrainingRuntime; the stored and the built-in ones for
// ClusterTrainingRuntime).
//
// A Runtimes is used by one check at a time; it asks its Lookup once per
// kind and name. The nil *Runtimes resolves the built-in runtimes alone.
type Runtimes struct {
	files   map[string]*apiv1.TrainingRuntime
	builtin map[string]*apiv1.TrainingRuntime
	stored  Lookup
	found   map[[2]string]*apiv1.TrainingRuntime
	err     error
}

// NewRuntimes returns the runtimes of the submitted files over the
// built-in ones, with none stored (see WithStored). The files' runtimes
// are TrainingRuntimes, whatever kind their documents say.
func NewRuntimes(files ...apiv1.TrainingRuntime) *Runtimes {
	return &Runtimes{files: byName(files), builtin: byName(Builtin()), found: map[[2]string]*apiv1.TrainingRuntime{}}
}

// WithStored makes r look up the stored runtimes in find too (nil: none),
// and returns r.
func (r *Runtimes) WithStored(find Lookup) *Runtimes {
	r.stored = find
	return r
}

func byName(list []apiv1.TrainingRuntime) map[string]*apiv1.TrainingRuntime {
	m := make(map[string]*apiv1.TrainingRuntime, len(list))
	for i := range list {
		m[list[i].Metadata.Name] = &list[i]
	}
	return m
}

// Resolved is the runtime a name resolved to: its spec, and which runtime
// and version it is.
type Resolved struct {
	Spec *apiv1.TrainingRuntimeSpec
	Ref  apiv1.ResolvedRuntimeRef
}

// Resolve finds the runtime of kind (empty: any, in lookup order) named
// name. When there is none it returns the problem, at the task's field
// runtime (none of that name) or runtimeKind (a kind kiln does not know,
// or none of that kind). A store error is kept for Err, and reads as a
// runtime not found.
func (r *Runtimes) Resolve(kind, name string) (*Resolved, *Problem) {
	if r == nil {
		r = NewRuntimes()
	}
	switch kind {
	case "", apiv1.KindTrainingRuntime, apiv1.KindClusterTrainingRuntime:
	default:
		return nil, &Problem{
			apiv1.CodeRuntimeRef, "runtimeKind",
			fmt.Sprintf("runtime kind %q is neither %s nor %s", kind, apiv1.KindTrainingRuntime, apiv1.KindClusterTrainingRuntime),
		}
	}
	for _, pl := range order(kind) {
		if res := r.find(pl, name); res != nil {
			return res, nil
		}
	}
	if kind != "" {
		for _, pl := range order("") {
			if res := r.find(pl, name); res != nil && res.Ref.Kind != kind {
				return nil, &Problem{
					apiv1.CodeRuntimeKind, "runtimeKind",
					fmt.Sprintf("runtime %q is a %s, not a %s", name, res.Ref.Kind, kind),
				}
			}
		}
	}
	return nil, &Problem{apiv1.CodeUnknownRuntime, "runtime", r.unknown(name)}
}

// place is where a runtime may be found: a kind, from a source.
type place struct {
	kind   string
	source apiv1.RuntimeSource
}

// lookupOrder is every place, first to last.
var lookupOrder = [...]place{
	{apiv1.KindTrainingRuntime, apiv1.RuntimeSourceFiles},
	{apiv1.KindTrainingRuntime, apiv1.RuntimeSourceStored},
	{apiv1.KindClusterTrainingRuntime, apiv1.RuntimeSourceStored},
	{apiv1.KindClusterTrainingRuntime, apiv1.RuntimeSourceBuiltin},
}

// order is the places of kind (empty: of every kind), in lookup order.
func order(kind string) []place {
	var out []place
	for _, pl := range lookupOrder {
		if kind == "" || pl.kind == kind {
			out = append(out, pl)
		}
	}
	return out
}

// find looks for name in one place.
func (r *Runtimes) find(pl place, name string) *Resolved {
	var rt *apiv1.TrainingRuntime
	switch pl.source {
	case apiv1.RuntimeSourceFiles:
		rt = r.files[name]
	case apiv1.RuntimeSourceBuiltin:
		rt = r.builtin[name]
	default:
		rt = r.lookup(pl.kind, name)
	}
	if rt == nil {
		return nil
	}
	ref := apiv1.ResolvedRuntimeRef{Kind: pl.kind, Name: name, Source: pl.source}
	if pl.source == apiv1.RuntimeSourceStored && rt.Status != nil {
		ref.Project, ref.Version = rt.Status.Project, rt.Status.Version
	}
	return &Resolved{&rt.Spec, ref}
}

// lookup asks the store for a runtime, once per kind and name.
func (r *Runtimes) lookup(kind, name string) *apiv1.TrainingRuntime {
	if r.stored == nil {
		return nil
	}
	key := [2]string{kind, name}
	if rt, seen := r.found[key]; seen {
		return rt
	}
	rt, err := r.stored(kind, name)
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("looking up %s %s: %w", kind, name, err)
	}
	r.found[key] = rt
	return rt
}

// unknown says that no runtime is named name, and where kiln looked.
func (r *Runtimes) unknown(name string) string {
	if r.stored == nil {
		return fmt.Sprintf("no runtime is named %q", name)
	}
	return fmt.Sprintf("no runtime is named %q: none in the files, stored in the project or for all projects, or built in", name)
}

// Err is the store's first error, if looking up runtimes met one: the
// problems found with it may be wrong, and a check returns it instead.
func (r *Runtimes) Err() error {
	if r == nil {
		return nil
	}
	return r.err
}
