package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/workflow"
)

func newValidateCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check workflow files and print every problem found",
		Long: "Check workflow files and print every problem found. With --backend kubernetes (or the\n" +
			"configuration file's backend) every task must also have a container image.",
		Args: needFiles("kiln validate needs the files to check: kiln validate FILE..."),
		RunE: func(cmd *cobra.Command, files []string) error {
			backend, _, cfgErr := e.backend.resolve(e.home)
			if cfgErr != nil {
				return cfgErr
			}
			docs, readErr := workflow.ReadFiles(files)
			plans, checkErr := workflow.CheckFiles(files, docs, nil)
			if backend == app.BackendKubernetes {
				var kept []workflow.Checked
				for _, p := range plans {
					if err := workflow.RequireImages(p.Doc, p.Plan); err != nil {
						checkErr = errors.Join(checkErr, err)
						continue
					}
					kept = append(kept, p)
				}
				plans = kept
			}
			for _, p := range plans {
				fmt.Fprintf(e.stdout, "ok: %s: %s (%s)\n", p.Doc.File, p.Doc.Object(), plural(len(p.Plan.Tasks), "task"))
			}
			if err := errors.Join(readErr, checkErr); err != nil {
				printError(e.stderr, err)
				return &exitError{exitFailed}
			}
			return nil
		},
	}
}

// plural is "1 task" or "n tasks".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
