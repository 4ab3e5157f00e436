package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/controller"
	"kiln.dev/kiln/internal/training"
	"kiln.dev/kiln/internal/workflow"
)

// Loaded is a checked workflow ready to submit.
type Loaded struct {
	Doc    *workflow.Document
	Plan   *workflow.Plan
	Params map[string]string
}

// Load reads files, checks every document, and returns the one runnable
// resource with its parameters resolved. Every problem found is returned.
func Load(files []string, params map[string]string) (*Loaded, error) {
	docs, err := workflow.ReadFiles(files)
	if err != nil {
		return nil, err
	}
	return LoadDocuments(files, docs, params)
}

// LoadDocuments is Load for documents already read (an API request body).
func LoadDocuments(files []string, docs []workflow.Document, params map[string]string) (*Loaded, error) {
	plans, err := CheckDocuments(docs)
	if err != nil {
		return nil, err
	}
	if len(plans) != 1 {
		return nil, runnableError(files, plans)
	}
	l := &Loaded{Doc: plans[0].Doc, Plan: plans[0].Plan}
	l.Params, err = workflow.ResolveParams(l.Doc, l.Plan.Workflow, params)
	return l, err
}

// Checked is one valid runnable document (Workflow or TrainJob) and its
// compiled plan.
type Checked struct {
	Doc  *workflow.Document
	Plan *workflow.Plan
}

// CheckDocuments validates every document: TrainingRuntimes first, which
// then override the built-in runtimes of the same name for the Workflows
// and TrainJobs beside them. It returns the compiled runnable documents
// and every problem found.
func CheckDocuments(docs []workflow.Document) ([]Checked, error) {
	user, err := Runtimes(docs)
	errs := []error{err}
	runtimes := training.NewRuntimes(user...)
	var out []Checked
	for i := range docs {
		plan, err := compileDocument(&docs[i], runtimes)
		errs = append(errs, err)
		if plan != nil {
			resolveRuntimes(plan)
			out = append(out, Checked{Doc: &docs[i], Plan: plan})
		}
	}
	return out, errors.Join(errs...)
}

// Runtimes decodes the TrainingRuntime documents among docs. Each carries
// the file it came from in the annotation kiln.dev/source.
func Runtimes(docs []workflow.Document) ([]apiv1.TrainingRuntime, error) {
	var errs []error
	var out []apiv1.TrainingRuntime
	for i := range docs {
		if docs[i].Kind != apiv1.KindTrainingRuntime {
			continue
		}
		rt, err := workflow.DecodeTrainingRuntime(&docs[i])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rt.Metadata.Annotations = map[string]string{"kiln.dev/source": docs[i].File}
		out = append(out, *rt)
	}
	return out, errors.Join(errs...)
}

func compileDocument(doc *workflow.Document, runtimes training.Runtimes) (*workflow.Plan, error) {
	switch doc.Kind {
	case apiv1.KindTrainingRuntime:
		return nil, nil
	case apiv1.KindTrainJob:
		tj, err := workflow.DecodeTrainJob(doc)
		if err != nil {
			return nil, err
		}
		return workflow.CompileTrainJob(doc, tj, runtimes)
	case apiv1.KindWorkflow:
		wf, err := workflow.DecodeWorkflow(doc)
		if err != nil {
			return nil, err
		}
		return workflow.Compile(doc, wf, runtimes)
	}
	return nil, &apiv1.Error{
		Code: apiv1.CodeKind, File: doc.File, Object: doc.Object(), Field: "kind",
		Message: fmt.Sprintf("kind %q is not one of Workflow, TrainJob, TrainingRuntime", doc.Kind),
	}
}

// resolveRuntimes writes each train task's runtime into the workflow, so
// the run keeps the runtime it was submitted with.
func resolveRuntimes(plan *workflow.Plan) {
	for i, t := range plan.Tasks {
		if t.Train != nil {
			plan.Workflow.Spec.Tasks[i].Train.ResolvedRuntime = t.Train.Runtime
		}
	}
}

func runnableError(files []string, plans []Checked) error {
	names := make([]string, len(plans))
	for i := range plans {
		names[i] = plans[i].Doc.Object()
	}
	return &apiv1.Error{
		Code: apiv1.CodeRunnable, File: strings.Join(files, ", "),
		Message: fmt.Sprintf("found %d runnable resources (%s), want exactly one Workflow or TrainJob", len(plans), strings.Join(names, ", ")),
	}
}

// Submit submits a loaded workflow to this app's engine, in project
// "default".
func (a *App) Submit(ctx context.Context, l *Loaded) (apiv1.RunID, error) {
	return a.SubmitTo(ctx, l, "")
}

// SubmitTo submits a loaded workflow to this app's engine in project.
func (a *App) SubmitTo(ctx context.Context, l *Loaded, project string) (apiv1.RunID, error) {
	if a.Kube != nil {
		if err := workflow.RequireImages(l.Doc, l.Plan); err != nil {
			return "", err
		}
	}
	src, dir := l.Doc.File, ""
	if src != "" && src != "-" {
		if abs, err := filepath.Abs(src); err == nil {
			src, dir = abs, filepath.Dir(abs)
		}
	}
	return a.Controller.Submit(ctx, controller.SubmitParams{
		Plan: l.Plan, Params: l.Params, Source: src, WorkDir: dir, Suspend: l.Plan.Suspend, Project: project,
	})
}
