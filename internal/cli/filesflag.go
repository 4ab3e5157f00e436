package cli

import "github.com/spf13/cobra"

// filesFlag is -f FILE (repeatable) of kiln run and submit, beside the
// FILE arguments, as kiln apply, kubectl and argo take files; "-" is
// standard input in either place.
type filesFlag []string

func (f *filesFlag) add(cmd *cobra.Command) {
	cmd.Flags().StringArrayVarP((*[]string)(f), "filename", "f", nil, "a file of the run's documents, - for standard input (repeatable; the same as FILE arguments); tasks start in the file's directory, the current one for standard input")
}

// with is the files the flag and args name, or a usage error saying says
// when there are none.
func (f filesFlag) with(args []string, says string) ([]string, error) {
	files := append(append([]string(nil), f...), args...)
	if len(files) == 0 {
		return nil, usagef("%s", says)
	}
	return files, nil
}
