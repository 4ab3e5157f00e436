package cli

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newCacheGetCmd(e *env) *cobra.Command {
	var project, out string
	cmd := &cobra.Command{
		Use:   "get KEY NAME",
		Short: "Download an artifact of a stored result: a file to -o FILE (default standard output), a directory into -o DIR",
		Args:  between(2, 2, "kiln cache get takes a result's key (as kiln cache ls shows it) and the name of one of its artifacts"),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, name := args[0], args[1]
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			entries, err := eng.CacheEntries(cmd.Context(), apiv1.CacheQuery{Project: project})
			if err != nil {
				return err
			}
			want := strings.TrimPrefix(key, "sha256:")
			for _, en := range entries {
				if !strings.HasPrefix(strings.TrimPrefix(en.Key, "sha256:"), want) {
					continue
				}
				for _, a := range en.Artifacts {
					if a.Name != name {
						continue
					}
					fetch := func(w io.Writer) error { return eng.CacheArtifact(cmd.Context(), project, key, name, w) }
					if a.Dir || a.Files != nil {
						return getDir(e, fetch, shortKey(en.Key)+"/"+name, cmp.Or(out, name))
					}
					return getFile(e, fetch, out)
				}
			}
			return &apiv1.Error{
				Code: apiv1.CodeNoArtifact, Message: fmt.Sprintf("no stored result with key %s holds an artifact %s", key, name),
				Hint: "kiln cache ls -o json lists the results and their artifacts",
			}
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "the result's project (default: every project's)")
	cmd.Flags().StringVarP(&out, "out", "o", "", "where to write it: a file (default standard output), or for a directory artifact a directory (default the artifact's name)")
	return cmd
}
