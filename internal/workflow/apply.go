package workflow

import (
	"errors"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/training"
)

// Applying is what the files of kiln apply store, every object of them
// valid.
type Applying struct {
	// Templates are the WorkflowTemplates, in the order of the files.
	Templates []*apiv1.WorkflowTemplate
	// Runtimes are the TrainingRuntimes and ClusterTrainingRuntimes
	// (TypeMeta.Kind says which), in the order of the files, without status.
	Runtimes []*apiv1.TrainingRuntime
}

// CheckApply checks the documents kiln apply reads from files:
// WorkflowTemplates (see CheckTemplates), TrainingRuntimes and
// ClusterTrainingRuntimes. A template's train tasks find their runtimes
// among those of the files, then those stored (runtimes; nil: none), then
// the built-in ones. It returns what to store when every object is valid,
// and otherwise every problem found, each naming its file, object and
// field; or, when looking up something stored failed, that error alone.
func CheckApply(files []string, docs []Document, stored Stored, runtimes StoredRuntimes) (*Applying, error) {
	docs, terr := Translate(docs)
	if terr != nil && len(docs) == 0 {
		return nil, terr // nothing left to check: the files hold what failed
	}
	out, err := checkApply(files, docs, stored, runtimes)
	if err := errors.Join(terr, asWritten(docs, err)); err != nil {
		return nil, err
	}
	return out, nil
}

func checkApply(files []string, docs []Document, stored Stored, runtimes StoredRuntimes) (*Applying, error) {
	out := &Applying{}
	var rest []Document
	var errs []error
	seen := map[string]bool{}
	for i := range docs {
		d := &docs[i]
		if d.Kind != apiv1.KindTrainingRuntime && d.Kind != apiv1.KindClusterTrainingRuntime {
			rest = append(rest, *d)
			continue
		}
		rt, err := decodeApplied(d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if key := rt.Kind + "/" + rt.Metadata.Name; seen[key] {
			errs = append(errs, docError(d, apiv1.CodeDuplicate, "metadata.name", fmt.Sprintf("%s %q is in the files twice", rt.Kind, rt.Metadata.Name)))
			continue
		}
		seen[rt.Kind+"/"+rt.Metadata.Name] = true
		out.Runtimes = append(out.Runtimes, rt)
	}
	if len(rest) > 0 || len(out.Runtimes)+len(errs) == 0 {
		resolver := training.NewRuntimes().WithStored(appliedFirst(out.Runtimes, runtimes))
		tmpls, err := checkTemplates(files, rest, stored, resolver)
		if resolver.Err() != nil {
			return nil, err // the store's error, alone
		}
		out.Templates, errs = tmpls, append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeApplied decodes a runtime document of kiln apply into kiln's
// type, its kind in TypeMeta.Kind: the one place a runtime of another
// shape would be translated.
func decodeApplied(d *Document) (*apiv1.TrainingRuntime, error) {
	return DecodeRuntime(d)
}

// appliedFirst finds the runtimes being applied before those stored: the
// templates applied beside them run with them.
func appliedFirst(applied []*apiv1.TrainingRuntime, stored StoredRuntimes) StoredRuntimes {
	return func(kind, name string) (*apiv1.TrainingRuntime, error) {
		for _, rt := range applied {
			if rt.Kind == kind && rt.Metadata.Name == name {
				return rt, nil
			}
		}
		if stored == nil {
			return nil, nil
		}
		return stored(kind, name)
	}
}
