package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/workflow"
)

func newValidateCmd(e *env) *cobra.Command {
	var project string
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check workflow and template files and print every problem found",
		Long: "Check workflow and template files and print every problem found. With --backend kubernetes\n" +
			"(or the configuration file's backend) every task must also have a container image; on the local\n" +
			"backend, a command (a training job converted from training-operator's may leave it to its image).\n\n" +
			"It checks the files alone, offline: a subworkflow that no Workflow of the files is named\n" +
			"after is reported missing (KLN-1025), though kiln run would find a WorkflowTemplate of that\n" +
			"name stored in the run's project, and a runtime stored with kiln apply is reported unknown\n" +
			"(KLN-1017). With --project P it looks those up among P's stored templates and runtimes (and\n" +
			"the ClusterTrainingRuntimes), in this home's store or, with --server, the server's.",
		Args: needFiles("kiln validate needs the files to check: kiln validate FILE..."),
		RunE: func(cmd *cobra.Command, files []string) error {
			chosen, cfgErr := e.backend.resolve(e.home)
			backend := chosen.name
			if cfgErr != nil {
				return cfgErr
			}
			stored, runtimes, done, err := e.storedLookups(cmd.Context(), project)
			if err != nil {
				return err
			}
			defer done()
			docs, readErr := workflow.ReadFiles(files)
			docs, translateErr := workflow.Translate(docs) // Kubeflow's documents as kiln's
			readErr = errors.Join(readErr, translateErr)
			tmplDocs, docs := splitTemplates(docs)
			clusterDocs, docs := splitKind(docs, apiv1.KindClusterTrainingRuntime)
			schedDocs, docs := splitKind(docs, apiv1.KindSchedule)
			quotaErr := validateQuotas(e, &docs)
			clusterRTs, clusterErr := validateClusterRuntimes(e, clusterDocs)
			checkErr := errors.Join(quotaErr, workflow.AsWritten(clusterDocs, clusterErr))
			var tmpls []*apiv1.WorkflowTemplate
			if len(tmplDocs) > 0 {
				var err error
				tmpls, err = workflow.CheckTemplatesWith(files, tmplDocs, stored, runtimes)
				checkErr = errors.Join(checkErr, err)
				for _, t := range tmpls {
					fmt.Fprintf(e.stdout, "ok: %s: WorkflowTemplate/%s (%s)\n", fileOf(tmplDocs, t.Metadata.Name), t.Metadata.Name, plural(len(t.Spec.Tasks), "task"))
				}
			}
			// The runs of the files find the templates and cluster runtimes
			// beside them, as kiln apply runs them.
			besideStored, besideRuntimes := workflow.Beside(tmpls, clusterRTs, stored, runtimes)
			plans, err := workflow.CheckFilesWith(files, docs, besideStored, besideRuntimes)
			checkErr = errors.Join(checkErr, err)
			checkErr = errors.Join(checkErr, validateSchedules(e, project, schedDocs, tmpls, app.Lookups{Templates: stored, Runtimes: runtimes}))
			require := workflow.RequireCommands // processes on hosts run commands
			if app.BackendRunsImages(backend) {
				require = workflow.RequireImages
			}
			var kept []workflow.Checked
			for _, p := range plans {
				if err := require(p.Doc, p.Plan); err != nil {
					checkErr = errors.Join(checkErr, err)
					continue
				}
				kept = append(kept, p)
			}
			plans = kept
			for _, p := range plans {
				fmt.Fprintf(e.stdout, "ok: %s: %s (%s)\n", p.Doc.File, p.Doc.Object(), plural(len(p.Plan.Tasks), "task"))
				printNotes(e, workflow.IgnoredOn(backendName(backend), p.Ignored))
			}
			if err := errors.Join(readErr, checkErr); err != nil {
				printError(e.stderr, err)
				return &exitError{exitFailed}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "also look up subworkflows among this project's stored WorkflowTemplates (default: the files alone)")
	return cmd
}

// storedLookups looks up the stored templates and runtimes of project
// through the engine, or finds none when project is empty: the files
// alone are checked, and nothing is opened.
func (e *env) storedLookups(ctx context.Context, project string) (workflow.Stored, workflow.StoredRuntimes, func(), error) {
	if project == "" {
		return nil, nil, func() {}, nil
	}
	eng, done, err := e.open(ctx, reading, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	runtimes := func(kind, name string) (*apiv1.TrainingRuntime, error) {
		rt, err := eng.GetRuntime(ctx, apiv1.RuntimeQuery{Project: project, Kind: kind, Name: name})
		if apiv1.CodeOf(err) == apiv1.CodeNoRuntime || err == nil && (rt.Status == nil || rt.Status.Source != apiv1.RuntimeSourceStored) {
			return nil, nil // none stored: a built-in one is the checker's own
		}
		return rt, err
	}
	return func(name string) (*apiv1.Workflow, error) {
		t, err := eng.GetTemplate(ctx, project, name)
		if apiv1.CodeOf(err) == apiv1.CodeNoTemplate {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return t.Workflow(), nil
	}, runtimes, done, nil
}

// splitTemplates separates the WorkflowTemplate documents of docs from the rest.
func splitTemplates(docs []workflow.Document) (tmpls, rest []workflow.Document) {
	for _, d := range docs {
		if d.Kind == apiv1.KindWorkflowTemplate {
			tmpls = append(tmpls, d)
		} else {
			rest = append(rest, d)
		}
	}
	return tmpls, rest
}

// splitKind separates the documents of kind from the rest.
func splitKind(docs []workflow.Document, kind string) (of, rest []workflow.Document) {
	for _, d := range docs {
		if d.Kind == kind {
			of = append(of, d)
		} else {
			rest = append(rest, d)
		}
	}
	return of, rest
}

// validateSchedules checks Schedule documents as kiln apply does, the
// templates they run among tmpls (those of the files) or found by look,
// and says which are valid.
func validateSchedules(e *env, project string, docs []workflow.Document, tmpls []*apiv1.WorkflowTemplate, look app.Lookups) error {
	if len(docs) == 0 {
		return nil
	}
	scheds, err := app.CheckSchedules(project, docs, tmpls, look)
	bad := map[string]bool{}
	for _, ce := range apiv1.Errors(err) {
		bad[ce.Object] = true
	}
	for _, s := range scheds {
		if obj := apiv1.KindSchedule + "/" + s.Metadata.Name; !bad[obj] {
			fmt.Fprintf(e.stdout, "ok: %s: %s (%s)\n", fileOf(docs, s.Metadata.Name), obj, s.Spec.Schedule)
		}
	}
	return workflow.AsWritten(docs, err)
}

// validateQuotas takes the ProjectQuota documents out of docs and checks
// them as kiln apply does, and says which are valid.
func validateQuotas(e *env, docs *[]workflow.Document) error {
	quotas, rest, err := app.SplitQuotas(*docs)
	for _, q := range quotas {
		for _, d := range *docs {
			if d.Kind == apiv1.KindProjectQuota && d.Name == q.Metadata.Name {
				fmt.Fprintf(e.stdout, "ok: %s: %s/%s\n", d.File, apiv1.KindProjectQuota, q.Metadata.Name)
				break
			}
		}
	}
	*docs = rest
	return err
}

// validateClusterRuntimes checks ClusterTrainingRuntime documents, which
// kiln apply stores, as it checks them, says which are valid and returns
// them.
func validateClusterRuntimes(e *env, docs []workflow.Document) ([]*apiv1.TrainingRuntime, error) {
	var errs []error
	var out []*apiv1.TrainingRuntime
	for i := range docs {
		rt, err := workflow.DecodeRuntime(&docs[i])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, rt)
		fmt.Fprintf(e.stdout, "ok: %s: %s/%s\n", docs[i].File, rt.Kind, rt.Metadata.Name)
		printNotes(e, workflow.IgnoredFields(&docs[i]))
	}
	return out, errors.Join(errs...)
}

// fileOf is the file of the template document named name.
func fileOf(docs []workflow.Document, name string) string {
	for _, d := range docs {
		if d.Name == name {
			return d.File
		}
	}
	return ""
}

// plural is "1 task" or "n tasks".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// backendName is the name of the backend a check is for: the one
// resolved, or the local backend when none is configured.
func backendName(resolved string) string {
	if resolved == "" {
		return app.BackendLocal
	}
	return resolved
}

// printNotes prints the fields the backend checked for ignores, one note
// each (a note's message says so itself).
func printNotes(e *env, ignored []workflow.Ignored) {
	for _, i := range ignored {
		if i.Note {
			fmt.Fprintf(e.stdout, "  %s\n", i.Message())
			continue
		}
		fmt.Fprintf(e.stdout, "  note: %s\n", i.Message())
	}
}
