package cli

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/workflow"
)

func newApplyCmd(e *env) *cobra.Command {
	var pool poolFlags
	var files []string
	var project string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "apply -f FILE...",
		Short: "Store the WorkflowTemplates and training runtimes of FILE..., and run its Workflows and TrainJobs",
		Long: "Store the WorkflowTemplates and TrainingRuntimes of FILE... (\"-\": standard input) in a project,\n" +
			"and its ClusterTrainingRuntimes for every project, creating or replacing each. A task of any later\n" +
			"run of the project runs a template with workflow: {name: NAME} when the run's own files hold no\n" +
			"Workflow of that name; a TrainJob or train task names a runtime the files lack (see kiln get\n" +
			"runtimes). Each template is checked as a Workflow first (it may run the other templates of the\n" +
			"files and those stored), each runtime as kiln run checks one; nothing is stored unless all are\n" +
			"valid. A runtime applied unchanged keeps its version; a changed one gets the next. Runs keep the\n" +
			"copy they were submitted with. A Schedule is stored in the project too, and kiln serve starts its\n" +
			"runs on its cron schedule (docs/schedules.md); applying one that exists keeps what it fired.\n\n" +
			"The Workflows and TrainJobs of FILE... (as kubectl apply takes a ClusterTrainingRuntime and the\n" +
			"TrainJob that uses it from one file) are checked with the rest, and submitted as runs, in the\n" +
			"order of the files, once everything else is stored: each prints its run's ID. Without a server\n" +
			"kiln apply then watches them as kiln run does; with one it leaves them to it (kiln wait RUN).\n" +
			"Without --project, a metadata.namespace names the project when kiln has one of that name.",
		RunE: func(cmd *cobra.Command, args []string) error {
			files = append(files, args...)
			if len(files) == 0 {
				return usagef("kiln apply needs the files of templates to store: kiln apply -f FILE...")
			}
			in := apiv1.TemplateApply{Project: project, AllProjects: true}
			for _, f := range files {
				src, err := workflow.ReadSource(f, e.stdin)
				if err != nil {
					return err
				}
				in.Files = append(in.Files, src)
			}
			u, pp := reading, (*poolFlags)(nil)
			if holdsRuns(in.Files) {
				u, pp = collecting, &pool
				if wd, err := os.Getwd(); err == nil {
					in.WorkDir = wd
				}
			}
			sig, unhook := interrupts()
			defer unhook()
			eng, done, err := e.open(cmd.Context(), u, pp)
			if err != nil {
				return err
			}
			defer done()
			res, err := eng.Apply(cmd.Context(), in)
			runs := printAppliedAll(e, res)
			if err != nil {
				return err
			}
			printAppliedNotes(e, in.Files)
			if len(runs) == 0 || e.server != "" {
				return nil
			}
			return watchRunsOn(e, eng, runs, quiet, sig)
		},
	}
	pool.add(cmd)
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "a file of WorkflowTemplate, Schedule, TrainingRuntime and ClusterTrainingRuntime documents, and Workflows and TrainJobs to run, - for standard input (repeatable)")
	cmd.Flags().StringVar(&project, "project", "", "the project that stores the templates and TrainingRuntimes and runs the runs (default: the documents' metadata.namespace when kiln has that project, else \"default\")")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the final summary of the runs it watches")
	return cmd
}

// holdsRuns reports whether files hold a Workflow or TrainJob (of any
// group kiln reads): kiln apply then runs them.
func holdsRuns(files []apiv1.SourceFile) bool {
	_, docs, _ := workflow.ReadSources(files)
	docs, _ = workflow.Translate(docs)
	for i := range docs {
		if docs[i].Kind == apiv1.KindWorkflow || docs[i].Kind == apiv1.KindTrainJob {
			return true
		}
	}
	return false
}

// printAppliedAll prints what kiln apply stored, then the runs it
// submitted, and returns their IDs.
func printAppliedAll(e *env, res *apiv1.ApplyResult) []apiv1.RunID {
	if res == nil {
		return nil
	}
	stored := &apiv1.ApplyResult{}
	var runs []apiv1.RunID
	for _, it := range res.Items {
		if it.Action != apiv1.ApplySubmitted {
			stored.Items = append(stored.Items, it)
		}
	}
	printApplied(e, stored)
	for _, it := range res.Items {
		if it.Action == apiv1.ApplySubmitted {
			fmt.Fprintf(e.stdout, "%s/%s submitted in project %s: run %s\n", it.Kind, it.Name, it.Project, it.Run)
			runs = append(runs, it.Run)
		}
	}
	return runs
}

func newGetTemplatesCmd(e *env) *cobra.Command {
	var output, project string
	cmd := &cobra.Command{
		Use:     "templates [NAME]",
		Aliases: []string{"template", "workflowtemplates", "workflowtemplate"},
		Short:   "List a project's stored WorkflowTemplates, or show one",
		Args:    between(0, 1, "kiln get templates takes at most one template's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			var list []*apiv1.WorkflowTemplate
			var shown any
			if len(args) == 1 {
				t, err := eng.GetTemplate(cmd.Context(), project, args[0])
				if err != nil {
					return err
				}
				list, shown = []*apiv1.WorkflowTemplate{t}, t
			} else if list, err = eng.ListTemplates(cmd.Context(), project); err != nil {
				return err
			} else {
				shown = list
			}
			if len(args) == 0 {
				shown = listDoc{APIVersion: apiv1.APIVersion, Kind: "WorkflowTemplateList", Items: nonNil(list)}
			}
			if done, err := printObject(e.stdout, output, shown); done {
				return err
			}
			return printTemplates(e, list)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml or jsonpath=TEMPLATE (what yaml prints, kiln apply takes back)")
	cmd.Flags().StringVar(&project, "project", "default", "the project whose templates to list")
	return cmd
}

func printTemplates(e *env, list []*apiv1.WorkflowTemplate) error {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTASKS\tPARAMS\tUPDATED")
	for _, t := range list {
		var params []string
		for _, p := range t.Spec.Params {
			params = append(params, p.Name)
		}
		updated := "-"
		if t.Status != nil {
			updated = age(t.Status.UpdatedAt)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", t.Metadata.Name, len(t.Spec.Tasks), strings.Join(params, ","), updated)
	}
	return tw.Flush()
}

func newDeleteCmd(e *env) *cobra.Command {
	del := group("delete", "Delete stored resources")
	var project string
	tmpl := &cobra.Command{
		Use:     "template NAME",
		Aliases: []string{"templates", "workflowtemplate"},
		Short:   "Delete a stored WorkflowTemplate; runs that use it keep their copy",
		Args:    one("kiln delete template takes the template's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			if err := eng.DeleteTemplate(cmd.Context(), project, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "WorkflowTemplate/%s deleted from project %s\n", args[0], project)
			return nil
		},
	}
	tmpl.Flags().StringVar(&project, "project", "default", "the project that stores the template")
	del.AddCommand(tmpl, newDeleteRunCmd(e), newDeleteRuntimeCmd(e), newDeleteScheduleCmd(e), newDeleteQuotaCmd(e))
	return del
}

// printAppliedNotes notes the fields of the applied Kubeflow documents
// some backend ignores: the stored runtime keeps only what kiln acts on.
func printAppliedNotes(e *env, files []apiv1.SourceFile) {
	_, docs, _ := workflow.ReadSources(files)
	docs, _ = workflow.Translate(docs)
	for i := range docs {
		if ignored := workflow.IgnoredFields(&docs[i]); len(ignored) > 0 {
			fmt.Fprintf(e.stdout, "%s:\n", docs[i].Object())
			printNotes(e, ignored)
		}
	}
}
