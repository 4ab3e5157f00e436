package workflow

import (
	"bytes"
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
	// Runs are the Workflows and TrainJobs of the files, in their order:
	// each is submitted as a run once the rest is stored, and runs with
	// what was stored.
	Runs []ApplyRun
}

// ApplyRun is a runnable document of kiln apply's files, checked against
// what the files store.
type ApplyRun struct {
	// Checked is the document and its plan.
	Checked
	// Files are what to submit: the document as written, and the
	// documents of the files it runs (Workflows it runs as subworkflows),
	// without those the apply stores.
	Files []apiv1.SourceFile
}

// CheckApply checks the documents kiln apply reads from files:
// WorkflowTemplates (see CheckTemplates), TrainingRuntimes and
// ClusterTrainingRuntimes. A template's train tasks find their runtimes
// among those of the files, then those stored (runtimes; nil: none), then
// the built-in ones. It returns what to store when every object is valid,
// and otherwise every problem found, each naming its file, object and
// field; or, when looking up something stored failed, that error alone.
func CheckApply(files []string, docs []Document, stored Stored, runtimes StoredRuntimes) (*Applying, error) {
	written := docs
	docs, terr := translate(docs)
	if terr != nil && len(docs) == 0 {
		return nil, terr // nothing left to check: the files hold what failed
	}
	out, err := checkApply(files, docs, stored, runtimes)
	if err := errors.Join(terr, asWritten(docs, err)); err != nil {
		return nil, err
	}
	for i := range out.Runs {
		out.Runs[i].Files = runFiles(files, written, docs, out.Runs[i].Doc)
	}
	return out, nil
}

func checkApply(files []string, docs []Document, stored Stored, runtimes StoredRuntimes) (*Applying, error) {
	docs, runs := splitRuns(docs)
	out, err := checkStored(files, docs, stored, runtimes, len(runs) > 0)
	if err != nil || len(runs) == 0 {
		return out, err
	}
	out.Runs, err = checkRuns(runs, withApplied(out.Templates, stored), appliedFirst(out.Runtimes, runtimes))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// splitRuns parts docs into what kiln apply stores and the Workflows and
// TrainJobs it runs (with the Workflows those run).
func splitRuns(docs []Document) (stored, runs []Document) {
	for _, d := range docs {
		if runnable(d.Kind) {
			runs = append(runs, d)
		} else {
			stored = append(stored, d)
		}
	}
	return stored, runs
}

// checkRuns checks the runnable documents of kiln apply as kiln run
// would once the rest is stored: their templates and runtimes are found
// among those applied first. Each must have a value for every parameter:
// kiln apply takes none.
func checkRuns(docs []Document, stored Stored, runtimes StoredRuntimes) ([]ApplyRun, error) {
	plans, err := CheckDocumentsWith(docs, stored, runtimes)
	if err != nil {
		return nil, err
	}
	var errs []error
	out := make([]ApplyRun, len(plans))
	for i, c := range plans {
		_, perr := ResolveParams(c.Doc, c.Plan.Workflow, nil)
		errs = append(errs, perr)
		out[i] = ApplyRun{Checked: c}
	}
	return out, errors.Join(errs...)
}

// Beside returns the lookups of the runs checked beside templates and
// runtimes that the same files apply: those find them first, then what
// stored and runtimes find (nil: nothing), as kiln apply runs them.
func Beside(tmpls []*apiv1.WorkflowTemplate, rts []*apiv1.TrainingRuntime, stored Stored, runtimes StoredRuntimes) (Stored, StoredRuntimes) {
	return withApplied(tmpls, stored), appliedFirst(rts, runtimes)
}

// withApplied finds the templates being applied before those stored: the
// runs applied beside them run them.
func withApplied(applied []*apiv1.WorkflowTemplate, stored Stored) Stored {
	return func(name string) (*apiv1.Workflow, error) {
		for _, t := range applied {
			if t.Metadata.Name == name {
				return t.Workflow(), nil
			}
		}
		if stored == nil {
			return nil, nil
		}
		return stored(name)
	}
}

// runFiles are the files to submit for the run of doc: each file with the
// documents as written that doc's run needs, doc's own and those of the
// Workflows it runs, and none that kiln apply stores or runs apart.
func runFiles(names []string, written, docs []Document, doc *Document) []apiv1.SourceFile {
	subs := subworkflowNames(docs)
	keep := map[[2]any]bool{}
	for i := range docs {
		d := &docs[i]
		own := d.File == doc.File && d.Index == doc.Index
		if own || d.Kind == apiv1.KindWorkflow && subs[d.Name] {
			keep[[2]any{d.File, d.Index}] = true
		}
	}
	// A document that is both (a translation into a run and runtimes,
	// say) is kept only as the run's own.
	for i := range docs {
		d := &docs[i]
		if runnable(d.Kind) && !subs[d.Name] && (d.File != doc.File || d.Index != doc.Index) {
			delete(keep, [2]any{d.File, d.Index})
		}
	}
	var out []apiv1.SourceFile
	for _, name := range names {
		var data []byte
		for i := range written {
			w := &written[i]
			if w.File == name && keep[[2]any{w.File, w.Index}] {
				data = append(append(data, "---\n"...), w.Raw...)
				if !bytes.HasSuffix(data, []byte("\n")) {
					data = append(data, '\n')
				}
			}
		}
		if len(data) > 0 {
			out = append(out, apiv1.SourceFile{Name: name, Data: data})
		}
	}
	return out
}

// checkStored checks the documents kiln apply stores: runtimes first,
// then templates. runs says the files hold runs too: then they need hold
// nothing else.
func checkStored(files []string, docs []Document, stored Stored, runtimes StoredRuntimes, runs bool) (*Applying, error) {
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
	if len(rest) > 0 || len(out.Runtimes)+len(errs) == 0 && !runs {
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
