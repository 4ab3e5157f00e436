package workflow

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/suggest"
	"kiln.dev/kiln/internal/training"
)

// Loaded is a checked runnable resource, ready to submit.
type Loaded struct {
	// Doc is the runnable document.
	Doc *Document
	// Plan is its compiled plan.
	Plan *Plan
	// Params are the values of every declared parameter.
	Params map[string]string
	// Ignored lists the fields of the documents, as written in another
	// API group, that some backend does not act on.
	Ignored []Ignored
}

// Checked is one valid runnable document (Workflow or TrainJob) and its
// compiled plan.
type Checked struct {
	Doc  *Document
	Plan *Plan
	// Ignored lists what some backend ignores of Doc and of the
	// runtimes of the files (see Origin).
	Ignored []Ignored
}

// Load reads files from disk, checks every document, and returns the one
// runnable resource with its parameters resolved. Every problem found is
// returned.
// Subworkflows come from the files alone.
func Load(files []string, params map[string]string) (*Loaded, error) {
	docs, readErr := ReadFiles(files)
	return loadRead(files, docs, readErr, params, nil, nil)
}

// loadRead loads docs, read from files; readErr joins the files' own
// problems, reported with the documents'.
func loadRead(files []string, docs []Document, readErr error, params map[string]string, stored Stored, runtimes StoredRuntimes) (*Loaded, error) {
	if readErr != nil {
		// With a file unread, how many runnables there are says nothing.
		_, err := CheckFilesWith(files, docs, stored, runtimes)
		return nil, errors.Join(readErr, err)
	}
	return loadDocuments(files, docs, params, stored, runtimes)
}

// LoadSubmission is Load for a submission's files. A subworkflow that
// none of their Workflows is named after is looked up in stored, the
// stored templates of the submission's project (nil: none).
func LoadSubmission(s *apiv1.Submission, stored Stored) (*Loaded, error) {
	return LoadSubmissionWith(s, stored, nil)
}

// LoadSubmissionWith is LoadSubmission whose train tasks also find the
// runtimes stored with kiln apply (runtimes; nil: none), after those of
// the files (see training.Runtimes for the order).
func LoadSubmissionWith(s *apiv1.Submission, stored Stored, runtimes StoredRuntimes) (*Loaded, error) {
	names, docs, err := ReadSources(s.Files)
	return loadRead(names, docs, err, s.Params, stored, runtimes)
}

// ReadSources reads the documents of files sent to kiln, as ReadFiles
// reads files from disk: their names, every document it could read, and
// a joined error for the rest.
func ReadSources(files []apiv1.SourceFile) (names []string, docs []Document, err error) {
	names = make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	errs := []error{Repeated(names)}
	seen := map[string]bool{}
	for _, f := range files {
		if seen[filepath.Clean(f.Name)] {
			continue
		}
		seen[filepath.Clean(f.Name)] = true
		d, err := Read(f.Name, strings.NewReader(string(f.Data)))
		docs = append(docs, d...)
		errs = append(errs, err)
	}
	return names, docs, errors.Join(errs...)
}

// LoadDocuments is Load for documents already read from files, with
// subworkflows looked up in stored when the files lack them. Exactly one
// of them must be runnable.
func LoadDocuments(files []string, docs []Document, params map[string]string, stored Stored) (*Loaded, error) {
	return loadDocuments(files, docs, params, stored, nil)
}

func loadDocuments(files []string, docs []Document, params map[string]string, stored Stored, runtimes StoredRuntimes) (*Loaded, error) {
	plans, err := CheckFilesWith(files, docs, stored, runtimes)
	if err != nil {
		return nil, err
	}
	if len(plans) != 1 {
		return nil, runnableError(files, plans)
	}
	l := &Loaded{Doc: plans[0].Doc, Plan: plans[0].Plan, Ignored: plans[0].Ignored}
	l.Params, err = ResolveParams(l.Doc, l.Plan.Workflow, params)
	return l, err
}

// CheckFiles checks the documents read from files, as kiln validate and
// kiln run both do: every document (CheckDocuments), and every file,
// which may hold at most one runnable resource (Read already refused a
// file without documents). It returns the runnable documents compiled
// and every problem found.
func CheckFiles(files []string, docs []Document, stored Stored) ([]Checked, error) {
	return CheckFilesWith(files, docs, stored, nil)
}

// CheckFilesWith is CheckFiles whose train tasks also find the runtimes
// stored with kiln apply (runtimes; nil: none).
func CheckFilesWith(files []string, docs []Document, stored Stored, runtimes StoredRuntimes) ([]Checked, error) {
	docs, terr := Translate(docs)
	plans, err := CheckDocumentsWith(docs, stored, runtimes)
	errs := []error{terr, err}
	subs := subworkflowNames(docs)
	for _, f := range files {
		var in []string
		for i := range docs {
			if docs[i].File == f && runnable(docs[i].Kind) && !subs[docs[i].Name] {
				in = append(in, docs[i].Object())
			}
		}
		if len(in) > 1 {
			errs = append(errs, &apiv1.Error{
				Code: apiv1.CodeRunnable, File: f, Message: fmt.Sprintf(
					"the file holds %d runnable resources (%s); one file runs one Workflow or TrainJob", len(in), strings.Join(in, ", ")),
				Hint: "split them into files of their own, one per kiln run; a Workflow that another one runs as a subworkflow, or names in dynamic.workflows, does not count",
			})
		}
	}
	return plans, errors.Join(errs...)
}

func runnable(kind string) bool { return kind == apiv1.KindWorkflow || kind == apiv1.KindTrainJob }

// CheckDocuments validates every document: TrainingRuntimes first, which
// then override the built-in runtimes of the same name for the Workflows
// and TrainJobs beside them. A subworkflow that no Workflow of docs is
// named after is looked up in stored (nil: it is missing). It returns the
// compiled runnable documents and every problem found; or, when looking
// up a stored template failed, that error alone.
func CheckDocuments(docs []Document, stored Stored) ([]Checked, error) {
	return CheckDocumentsWith(docs, stored, nil)
}

// CheckDocumentsWith is CheckDocuments whose train tasks also find the
// runtimes stored with kiln apply (storedRuntimes; nil: none), after
// those of docs. When looking one up failed, it returns that error alone.
func CheckDocumentsWith(docs []Document, stored Stored, storedRuntimes StoredRuntimes) ([]Checked, error) {
	docs, terr := Translate(docs)
	user, err := UserRuntimes(docs)
	errs := []error{terr, err}
	broken := brokenRuntimes(docs, user)
	runtimes := training.NewRuntimes(user...).WithStored(storedRuntimes)
	lib, decoded, decodeErrs := library(docs)
	subs := subworkflowNames(docs)
	found := newLookup(stored)
	var out []Checked
	for i := range docs {
		d := &docs[i]
		var plan *Plan
		var err error
		switch {
		case d.Kind == apiv1.KindWorkflow && subs[d.Name]:
			err = decodeErrs[i] // compiled as part of the workflows that run it
		case d.Kind == apiv1.KindWorkflow && decoded[i] == nil:
			err = decodeErrs[i]
		case d.Kind == apiv1.KindWorkflow:
			plan, err = withDecodeErrors(decodeErrs[i])(compileWith(d, decoded[i], runtimes, lib, found))
		default:
			plan, err = compileDocument(d, runtimes)
		}
		errs = append(errs, withoutMissing(err, broken))
		if plan != nil {
			if d.From != nil {
				plan.Rename = d.From.Field
			}
			resolveRuntimes(plan)
			out = append(out, Checked{Doc: d, Plan: plan, Ignored: append(append(IgnoredFields(d), runtimeIgnored(docs, plan)...), queueIgnored(d.Kind, plan)...)})
		}
	}
	errs = append(errs, unreached(docs, lib, subs, runtimes))
	if err := errors.Join(found.storeError(), runtimes.Err()); err != nil {
		return nil, err
	}
	return out, asWritten(docs, errors.Join(errs...))
}

// library decodes every Workflow of docs: the subworkflows tasks may
// run. decoded and errs (the problems of decoding) are per document.
func library(docs []Document) (lib Library, decoded []*apiv1.Workflow, errs []error) {
	lib = Library{}
	decoded = make([]*apiv1.Workflow, len(docs))
	errs = make([]error, len(docs))
	for i := range docs {
		if docs[i].Kind != apiv1.KindWorkflow {
			continue
		}
		wf, err := DecodeWorkflow(&docs[i])
		decoded[i], errs[i] = wf, err
		// A workflow decoded with problems (a bare value, decoded as
		// written) is still in the files: its problems are reported with
		// it, and the tasks that run it compile it as any other.
		if wf != nil {
			if _, dup := lib[wf.Metadata.Name]; !dup {
				lib[wf.Metadata.Name] = LibraryEntry{Doc: &docs[i], Workflow: wf}
			}
		}
	}
	return lib, decoded, errs
}

// subworkflowNames are the names of the workflows that a task of another
// workflow of docs runs: they are not runnable on their own.
func subworkflowNames(docs []Document) map[string]bool {
	names := map[string]bool{}
	for i := range docs {
		for _, name := range runs(&docs[i]) {
			if name != docs[i].Name {
				names[name] = true
			}
		}
	}
	return names
}

// runs lists the workflows that the tasks and onExit tasks of doc run,
// if it is a Workflow; nil if it is not, or does not decode.
func runs(doc *Document) []string {
	if doc.Kind != apiv1.KindWorkflow || !bytes.Contains(doc.JSON, []byte(`"workflow`)) { // "workflow", "workflows"
		return nil // most workflows run none: no need to decode them again
	}
	if doc.runs != nil {
		return *doc.runs
	}
	type task struct {
		Workflow *struct{ Name string } `json:"workflow"`
		Dynamic  *struct {
			Workflows []string `json:"workflows"`
		} `json:"dynamic"`
	}
	var wf struct {
		Spec struct {
			Tasks  []task `json:"tasks"`
			OnExit []task `json:"onExit"`
		} `json:"spec"`
	}
	names := []string{}
	if decodeJSON(doc.JSON, &wf, false) == nil {
		for _, t := range append(wf.Spec.Tasks, wf.Spec.OnExit...) {
			if t.Workflow != nil {
				names = append(names, t.Workflow.Name)
			}
			if t.Dynamic != nil {
				names = append(names, t.Dynamic.Workflows...)
			}
		}
	}
	doc.runs = &names // asked for by every check of the files: decoded once
	return names
}

// unreached compiles the workflows of lib that no runnable workflow of
// docs runs, directly or through others: those that only run each other
// in a cycle. Nothing else compiles them, and compiling them finds the
// cycle. Each cycle is compiled once, from its first document.
func unreached(docs []Document, lib Library, subs map[string]bool, runtimes *training.Runtimes) error {
	reached := map[string]bool{}
	var reach func(name string)
	reach = func(name string) {
		if e, ok := lib[name]; ok && !reached[name] {
			reached[name] = true
			for _, next := range runs(e.Doc) {
				reach(next)
			}
		}
	}
	for i := range docs {
		if !subs[docs[i].Name] {
			for _, name := range runs(&docs[i]) {
				reach(name)
			}
		}
	}
	var errs []error
	for i := range docs {
		name := docs[i].Name
		e, ok := lib[name]
		if docs[i].Kind != apiv1.KindWorkflow || !subs[name] || !ok || e.Doc != &docs[i] || reached[name] {
			continue
		}
		reach(name)
		_, err := CompileWith(e.Doc, e.Workflow, runtimes, lib)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// UserRuntimes decodes the TrainingRuntime documents among docs. Each
// carries the file it came from in the annotation kiln.dev/source.
func UserRuntimes(docs []Document) ([]apiv1.TrainingRuntime, error) {
	var errs []error
	var out []apiv1.TrainingRuntime
	for i := range docs {
		if docs[i].Kind != apiv1.KindTrainingRuntime {
			continue
		}
		rt, err := DecodeTrainingRuntime(&docs[i])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rt.Metadata.Annotations = map[string]string{"kiln.dev/source": docs[i].File}
		out = append(out, *rt)
	}
	return out, errors.Join(errs...)
}

func compileDocument(doc *Document, runtimes *training.Runtimes) (*Plan, error) {
	switch doc.Kind {
	case apiv1.KindTrainingRuntime:
		return nil, nil
	case apiv1.KindTrainJob:
		tj, err := DecodeTrainJob(doc)
		if tj == nil {
			return nil, err
		}
		return withDecodeErrors(err)(CompileTrainJob(doc, tj, runtimes))
	case apiv1.KindWorkflow:
		wf, err := DecodeWorkflow(doc)
		if wf == nil {
			return nil, err
		}
		return withDecodeErrors(err)(Compile(doc, wf, runtimes))
	}
	e := &apiv1.Error{
		Code: apiv1.CodeKind, File: doc.File, Object: doc.Object(), Field: "kind",
		Message: fmt.Sprintf("kind %q is not one kiln reads: %s run (or ship with a run), %s are stored (kiln apply; kiln validate checks them)",
			doc.Kind, strings.Join(runKinds, ", "), strings.Join(storedKinds, ", ")),
	}
	if s := suggest.Phrase(suggest.Closest(doc.Kind, slices.Concat(runKinds, storedKinds)), strconv.Quote); s != "" {
		e.Message += "; " + s
	}
	if slices.Contains([]string{apiv1.KindSchedule, apiv1.KindProjectQuota}, doc.Kind) {
		e.Message = "a " + doc.Kind + " does not run with a run's files: it is stored"
		e.Hint = "store it with kiln apply -f FILE (kiln validate checks it)"
	}
	if doc.APIVersion != "" && doc.APIVersion != apiv1.APIVersion {
		e.Field, e.Message = "apiVersion", fmt.Sprintf("apiVersion %q is not one kiln reads: %s", doc.APIVersion, apiv1.APIVersion)+readsToo
	}
	if doc.Kind == apiv1.KindClusterTrainingRuntime {
		e.Message = "a ClusterTrainingRuntime does not run with a run's files: it is stored for every project"
		e.Hint = "store it with kiln apply -f FILE, or make it kind: TrainingRuntime to ship it with this run"
	}
	if doc.Kind == apiv1.KindWorkflowTemplate {
		e.Message = "a WorkflowTemplate does not run with a run's files: it is stored, and runs find it by name"
		e.Hint = "store it with kiln apply -f FILE; a task runs it with workflow: {name: " + doc.Name + "}"
	}
	return nil, e
}

// runKinds are the kinds of kiln.dev/v1alpha1 a run's files hold, and
// storedKinds those kiln apply stores (kiln validate reads both).
var (
	runKinds    = []string{apiv1.KindWorkflow, apiv1.KindTrainJob, apiv1.KindTrainingRuntime}
	storedKinds = []string{apiv1.KindWorkflowTemplate, apiv1.KindSchedule, apiv1.KindProjectQuota, apiv1.KindClusterTrainingRuntime}
)

// withDecodeErrors adds the problems found while decoding a document (its
// bare values, decoded as written) to those of compiling it: there is no
// plan while there are any.
func withDecodeErrors(decodeErr error) func(*Plan, error) (*Plan, error) {
	return func(p *Plan, err error) (*Plan, error) {
		if decodeErr != nil {
			return nil, errors.Join(decodeErr, err)
		}
		return p, err
	}
}

// resolveRuntimes writes each train task's runtime, and which runtime
// and version it is, into the workflow, and its subworkflows', so the run
// keeps the runtime it was submitted with: a later change of a stored
// runtime, or its deletion, changes only the runs submitted after.
func resolveRuntimes(plan *Plan) {
	for _, t := range plan.Tasks {
		if t.Sub != nil && t.Sub.Plan != nil {
			resolveRuntimes(t.Sub.Plan) // subworkflows and onExit tasks
		}
		if t.Train == nil || t.Spec == nil || t.Spec.Train == nil {
			continue
		}
		train := t.Spec.Train // the task in the workflow, which the run keeps
		train.ResolvedRuntime = t.Train.Runtime
		if t.Train.Ref != nil {
			ref := *t.Train.Ref
			train.ResolvedRuntimeRef = &ref
		}
	}
}

func runnableError(files []string, plans []Checked) error {
	names := make([]string, len(plans))
	for i := range plans {
		names[i] = plans[i].Doc.Object()
	}
	found := "none"
	if len(names) > 0 {
		found = strings.Join(names, ", ")
	}
	return &apiv1.Error{
		Code: apiv1.CodeRunnable, File: strings.Join(files, ", "),
		Message: fmt.Sprintf("found %d runnable resources (%s), want exactly one Workflow or TrainJob", len(plans), found),
	}
}

// runtimeIgnored lists what some backend ignores of the TrainingRuntimes
// among docs that plan's training tasks run with, naming each runtime.
func runtimeIgnored(docs []Document, plan *Plan) []Ignored {
	used := map[string]bool{}
	for _, t := range plan.Tasks {
		if t.Spec != nil && t.Spec.Train != nil {
			used[t.Spec.Train.Runtime] = true
		}
	}
	var out []Ignored
	for i := range docs {
		if docs[i].Kind != apiv1.KindTrainingRuntime || !used[docs[i].Name] {
			continue
		}
		for _, ig := range IgnoredFields(&docs[i]) {
			ig.Field = docs[i].Object() + " " + ig.Field
			out = append(out, ig)
		}
	}
	return out
}

// brokenRuntimes names the TrainingRuntimes of docs that did not decode
// (user holds those that did): their own errors say what is wrong.
func brokenRuntimes(docs []Document, user []apiv1.TrainingRuntime) map[string]bool {
	ok := map[string]bool{}
	for _, rt := range user {
		ok[rt.Metadata.Name] = true
	}
	out := map[string]bool{}
	for i := range docs {
		if docs[i].Kind == apiv1.KindTrainingRuntime && !ok[docs[i].Name] {
			out[docs[i].Name] = true
		}
	}
	return out
}

// withoutMissing drops from err the KLN-1017 errors of a runtime that is
// in the files but broken: "no runtime is named" would only repeat them.
func withoutMissing(err error, broken map[string]bool) error {
	if err == nil || len(broken) == 0 {
		return err
	}
	missing := func(e *apiv1.Error) bool {
		for name := range broken {
			if e.Code == apiv1.CodeUnknownRuntime && strings.Contains(e.Message, strconv.Quote(name)) {
				return true
			}
		}
		return false
	}
	coded := apiv1.Errors(err)
	if !slices.ContainsFunc(coded, missing) {
		return err // as it is, uncoded errors and all
	}
	var keep []error
	for _, e := range coded {
		if !missing(e) {
			keep = append(keep, e)
		}
	}
	return errors.Join(keep...)
}
