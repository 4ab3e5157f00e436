package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/workflow"
)

func newConvertCmd(e *env) *cobra.Command {
	var files []string
	var output string
	cmd := &cobra.Command{
		Use:   "convert -f FILE... [-o yaml|json]",
		Short: "Print the kiln documents that Argo workflows, training-operator or Kubeflow Trainer jobs run as",
		Long: "Print the documents of FILE... (\"-\": standard input) as kiln runs them: a PyTorchJob, TFJob,\n" +
			"MPIJob, XGBoostJob, JAXJob or PaddleJob (kubeflow.org/v1) as a TrainJob and the TrainingRuntime that gives\n" +
			"its processes the operator's environment; a Kubeflow Trainer document (trainer.kubeflow.org)\n" +
			"as kiln's own kind; an Argo Workflow (argoproj.io) as a kiln Workflow, with one generated Workflow\n" +
			"per DAG or steps template it calls (WorkflowTemplates as stored kiln WorkflowTemplates);\n" +
			"kiln's documents as they are. kiln run and kiln validate take the output\n" +
			"back, so it can be committed in place of the original. The result is checked offline, as kiln\n" +
			"validate checks; fields that some backend ignores are listed on standard error.",
		RunE: func(_ *cobra.Command, args []string) error {
			files = append(files, args...)
			if len(files) == 0 {
				return usagef("kiln convert needs the files to convert: kiln convert -f FILE...")
			}
			if output != "yaml" && output != "json" {
				return usagef("output format %q is not one of yaml, json", output)
			}
			return e.convert(files, output)
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "a file of documents, - for standard input (repeatable)")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml (documents kiln reads back) or json (a list of them)")
	return cmd
}

// convert prints the conversion of files in format.
func (e *env) convert(files []string, format string) error {
	var srcs []apiv1.SourceFile
	for _, f := range files {
		src, err := workflow.ReadSource(f, e.stdin)
		if err != nil {
			return err
		}
		srcs = append(srcs, src)
	}
	names, docs, err := workflow.ReadSources(srcs)
	if err != nil {
		printError(e.stderr, err)
		return &exitError{exitFailed}
	}
	out, ignored, err := workflow.Convert(names, docs)
	if err != nil {
		printError(e.stderr, err)
		return &exitError{exitFailed}
	}
	for _, i := range ignored {
		if i.Note {
			fmt.Fprintln(e.stderr, i.Message()) // "note: ..."
			continue
		}
		fmt.Fprintf(e.stderr, "warning: %s\n", i.Message())
	}
	if format == "json" {
		return printConvertedJSON(e, out)
	}
	for i, d := range out {
		if i > 0 {
			fmt.Fprintln(e.stdout, "---")
		}
		if d.From != nil {
			fmt.Fprintf(e.stdout, "# converted by kiln convert from the %s of %s (%s)\n", d.From.Kind, d.File, d.From.APIVersion)
		}
		fmt.Fprint(e.stdout, strings.TrimSuffix(string(d.Raw), "\n")+"\n")
	}
	return nil
}

func printConvertedJSON(e *env, docs []workflow.Document) error {
	list := make([]json.RawMessage, len(docs))
	for i, d := range docs {
		list[i] = d.JSON
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(list)
}
