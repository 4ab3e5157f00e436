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
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			docs, readErr := workflow.ReadFiles(files)
			plans, checkErr := app.CheckDocuments(docs)
			for _, p := range plans {
				fmt.Fprintf(e.stdout, "ok: %s: %s (%d tasks)\n", p.Doc.File, p.Doc.Object(), len(p.Plan.Tasks))
			}
			if err := errors.Join(readErr, checkErr); err != nil {
				printError(e.stderr, err)
				return &exitError{exitFailed}
			}
			return nil
		},
	}
}
