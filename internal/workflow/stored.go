package workflow

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/suggest"
	"kiln.dev/kiln/internal/training"
)

// Stored looks up a WorkflowTemplate stored in the project of what is
// being checked (kiln apply keeps them), by name: it is where a
// subworkflow that no Workflow of the files is named after comes from.
// It returns nil and no error when the project has none of that name;
// an error is the store's, and is returned instead of the check's
// findings. A nil Stored finds nothing: the files alone are checked.
type Stored func(name string) (*apiv1.Workflow, error)

// lookup finds stored templates through a Stored, each name once, and
// keeps the first error of the store.
type lookup struct {
	find  Stored
	found map[string]*LibraryEntry // nil: the project has none of that name
	err   error
}

func newLookup(find Stored) *lookup {
	return &lookup{find: find, found: map[string]*LibraryEntry{}}
}

// get returns the stored template named name as a library entry, with
// a document of its own that errors name (WorkflowTemplate/<name>).
func (s *lookup) get(name string) (LibraryEntry, bool) {
	if s == nil || s.find == nil {
		return LibraryEntry{}, false
	}
	if e, seen := s.found[name]; seen {
		return entryOf(e)
	}
	wf, err := s.find(name)
	if err != nil {
		if s.err == nil {
			s.err = fmt.Errorf("looking up WorkflowTemplate %s: %w", name, err)
		}
		return LibraryEntry{}, false
	}
	var e *LibraryEntry
	if wf != nil {
		e = &LibraryEntry{Doc: &Document{APIVersion: apiv1.APIVersion, Kind: apiv1.KindWorkflowTemplate, Name: name}, Workflow: wf}
	}
	s.found[name] = e
	return entryOf(e)
}

func entryOf(e *LibraryEntry) (LibraryEntry, bool) {
	if e == nil {
		return LibraryEntry{}, false
	}
	return *e, true
}

// storeError is the store's first error, if looking up templates met one.
func (s *lookup) storeError() error {
	if s == nil {
		return nil
	}
	return s.err
}

// DecodeWorkflowTemplate decodes doc as a WorkflowTemplate, as strictly
// as DecodeWorkflow decodes a Workflow. Its status, which kiln sets, is
// dropped.
func DecodeWorkflowTemplate(doc *Document) (*apiv1.WorkflowTemplate, error) {
	if err := checkHeader(doc, apiv1.KindWorkflowTemplate); err != nil {
		return nil, err
	}
	t := &apiv1.WorkflowTemplate{}
	problems, ok := decodeStrict(doc, t)
	t.Status = nil
	return decoded(t, problems, ok)
}

// CheckTemplates checks the documents kiln apply reads from files: each
// must be a WorkflowTemplate, compiled as a Workflow. A template may run
// the other templates of the files, which win, and those stored
// (stored). It returns the templates when every one is valid, and
// otherwise every problem found.
func CheckTemplates(files []string, docs []Document, stored Stored) ([]*apiv1.WorkflowTemplate, error) {
	return checkTemplates(files, docs, stored, nil)
}

// CheckTemplatesWith is CheckTemplates whose train tasks also find the
// runtimes stored with kiln apply (runtimes; nil: none).
func CheckTemplatesWith(files []string, docs []Document, stored Stored, runtimes StoredRuntimes) ([]*apiv1.WorkflowTemplate, error) {
	return checkTemplates(files, docs, stored, training.NewRuntimes().WithStored(runtimes))
}

// checkTemplates is CheckTemplates whose train tasks find their runtimes
// in runtimes (nil: the built-in ones).
func checkTemplates(files []string, docs []Document, stored Stored, runtimes *training.Runtimes) ([]*apiv1.WorkflowTemplate, error) {
	lib := Library{}
	var errs []error
	var out []*apiv1.WorkflowTemplate
	type check struct {
		LibraryEntry
		decodeErr error
	}
	var checks []check
	seen := map[string]bool{}
	for i := range docs {
		d := &docs[i]
		if d.Kind != apiv1.KindWorkflowTemplate {
			errs = append(errs, notATemplate(d))
			continue
		}
		t, err := DecodeWorkflowTemplate(d)
		if t == nil {
			errs = append(errs, err)
			continue
		}
		if seen[t.Metadata.Name] {
			errs = append(errs, err, docError(d, apiv1.CodeDuplicate, "metadata.name", fmt.Sprintf("WorkflowTemplate %q is in the files twice", t.Metadata.Name)))
			continue
		}
		seen[t.Metadata.Name] = true
		e := LibraryEntry{Doc: d, Workflow: t.Workflow()}
		if err == nil {
			lib[t.Metadata.Name] = e
		}
		checks = append(checks, check{e, err})
		out = append(out, t)
	}
	found := newLookup(stored)
	for _, c := range checks {
		_, err := withDecodeErrors(c.decodeErr)(compileWith(c.Doc, c.Workflow, runtimes, lib, found))
		errs = append(errs, err)
	}
	if err := errors.Join(found.storeError(), runtimes.Err()); err != nil {
		return nil, err
	}
	if len(out) == 0 && errors.Join(errs...) == nil {
		errs = append(errs, &apiv1.Error{Code: apiv1.CodeRequired, File: strings.Join(files, ", "), Message: "the files hold no WorkflowTemplate"})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// applyKinds are the kinds kiln apply stores.
var applyKinds = []string{
	apiv1.KindWorkflowTemplate, apiv1.KindTrainingRuntime, apiv1.KindClusterTrainingRuntime, apiv1.KindSchedule, apiv1.KindProjectQuota,
}

// notATemplate refuses a document other than a WorkflowTemplate in the
// files of kiln apply, saying where it belongs.
func notATemplate(d *Document) error {
	e := docError(d, apiv1.CodeKind, "kind", "")
	switch d.Kind {
	case apiv1.KindTrainingRuntime, apiv1.KindClusterTrainingRuntime:
		e.Message = fmt.Sprintf("a %s is not a WorkflowTemplate: this request stores templates alone", d.Kind)
		e.Hint = "store runtimes with kiln apply -f FILE (POST /api/v1/apply), which takes templates and runtimes together"
	case apiv1.KindWorkflow, apiv1.KindTrainJob:
		e.Message = fmt.Sprintf("a %s is not stored: kiln apply stores WorkflowTemplates, TrainingRuntimes and ClusterTrainingRuntimes", d.Kind)
		e.Hint = "run it with kiln run, or make it kind: WorkflowTemplate to store it for other workflows to run"
	default:
		e.Message = fmt.Sprintf("kind %q is not one kiln apply stores: %s (kiln run runs %s)",
			d.Kind, strings.Join(applyKinds, ", "), strings.Join(runKinds[:2], " and "))
		if s := suggest.Phrase(suggest.Closest(d.Kind, slices.Concat(applyKinds, runKinds)), strconv.Quote); s != "" {
			e.Message += "; " + s
		}
	}
	return e
}
