package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/controller"
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
	plans, err := CheckDocuments(docs)
	if err != nil {
		return nil, err
	}
	if len(plans) != 1 {
		return nil, runnableError(files, docs)
	}
	l := &Loaded{Doc: plans[0].Doc, Plan: plans[0].Plan}
	l.Params, err = workflow.ResolveParams(l.Doc, l.Plan.Workflow, params)
	return l, err
}

// Checked is one valid document and its compiled plan.
type Checked struct {
	Doc  *workflow.Document
	Plan *workflow.Plan
}

// CheckDocuments validates every document and returns the compiled plans.
func CheckDocuments(docs []workflow.Document) ([]Checked, error) {
	var errs []error
	var out []Checked
	for i := range docs {
		wf, err := workflow.DecodeWorkflow(&docs[i])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plan, err := workflow.Compile(&docs[i], wf)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, Checked{Doc: &docs[i], Plan: plan})
	}
	return out, errors.Join(errs...)
}

func runnableError(files []string, docs []workflow.Document) error {
	names := make([]string, len(docs))
	for i := range docs {
		names[i] = docs[i].Object()
	}
	return &apiv1.Error{
		Code: apiv1.CodeRunnable, File: strings.Join(files, ", "),
		Message: fmt.Sprintf("found %d runnable resources (%s), want exactly one", len(docs), strings.Join(names, ", ")),
	}
}

// Submit submits a loaded workflow to this app's engine.
func (a *App) Submit(ctx context.Context, l *Loaded) (apiv1.RunID, error) {
	src := l.Doc.File
	if src != "" && src != "-" {
		if abs, err := filepath.Abs(src); err == nil {
			src = abs
		}
	}
	return a.Controller.Submit(ctx, controller.SubmitParams{Plan: l.Plan, Params: l.Params, Source: src})
}
