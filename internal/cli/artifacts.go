package cli

import (
	"archive/tar"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newArtifactsCmd(e *env) *cobra.Command {
	c := group("artifacts", "List and download the output artifacts runs' tasks stored in the artifact repository")
	c.AddCommand(newArtifactsLsCmd(e), newArtifactsGetCmd(e))
	return c
}

func newArtifactsLsCmd(e *env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "ls RUN",
		Aliases: []string{"list"},
		Short:   "List the artifacts a run's tasks stored: task, name, path, size and digest",
		Args:    between(1, 1, "kiln artifacts ls takes a run's ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			list, err := eng.Artifacts(cmd.Context(), apiv1.RunID(args[0]))
			if err != nil {
				return err
			}
			if list == nil {
				list = []apiv1.RunArtifact{}
			}
			if done, err := printList(e.stdout, output, "RunArtifact", list); done {
				return err
			}
			if len(list) == 0 {
				fmt.Fprintf(e.stdout, "run %s stored no artifacts (kiln stores them when artifacts.s3 is configured)\n", args[0])
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TASK/NAME\tPATH\tKIND\tSIZE\tDIGEST")
			for _, a := range list {
				kind := "file"
				if a.Dir || a.Files != nil {
					kind = fmt.Sprintf("dir (%d files)", len(a.Files))
				}
				fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\t%s\n", a.Node, a.Name, a.Path, kind, humanBytes(a.Size), shortKey(a.Digest))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml or jsonpath=TEMPLATE")
	return cmd
}

func newArtifactsGetCmd(e *env) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "get RUN TASK/NAME",
		Short: "Download a stored artifact: a file to -o FILE (default standard output), a directory into -o DIR",
		Args:  between(2, 2, "kiln artifacts get takes a run's ID and TASK/NAME, as kiln artifacts ls shows them"),
		RunE: func(cmd *cobra.Command, args []string) error {
			i := strings.LastIndex(args[1], "/")
			if i <= 0 || i == len(args[1])-1 {
				return &apiv1.Error{Code: apiv1.CodeUsage, Message: fmt.Sprintf("%q is not TASK/NAME", args[1]), Hint: "kiln artifacts ls " + args[0] + " lists them"}
			}
			node, name := args[1][:i], args[1][i+1:]
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			list, err := eng.Artifacts(cmd.Context(), apiv1.RunID(args[0]))
			if err != nil {
				return err
			}
			for _, a := range list {
				if a.Node != node || a.Name != name {
					continue
				}
				fetch := func(w io.Writer) error { return eng.Artifact(cmd.Context(), apiv1.RunID(args[0]), node, name, w) }
				if a.Dir || a.Files != nil {
					return getDir(e, fetch, args[1], cmp.Or(out, name))
				}
				return getFile(e, fetch, out)
			}
			return &apiv1.Error{
				Code: apiv1.CodeNoArtifact, Message: fmt.Sprintf("task %s of run %s stored no artifact %s", node, args[0], name),
				Hint: "kiln artifacts ls " + args[0] + " lists what the run's tasks stored",
			}
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "where to write it: a file (default standard output), or for a directory artifact a directory (default the artifact's name)")
	return cmd
}

// getFile writes a file artifact, which fetch copies, to out, or
// standard output.
func getFile(e *env, fetch func(io.Writer) error, out string) error {
	if out == "" || out == "-" {
		return fetch(e.stdout)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".kiln-artifact-*")
	if err != nil {
		return &apiv1.Error{Code: apiv1.CodeUsage, Field: "--out", Message: err.Error()}
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	err = fetch(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}

// getDir extracts a directory artifact's tar stream, which fetch copies,
// into out.
func getDir(e *env, fetch func(io.Writer) error, label, out string) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(fetch(pw)) }()
	defer pr.Close()
	tr := tar.NewReader(pr)
	n := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		dst := filepath.Join(out, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(dst, filepath.Clean(out)+string(filepath.Separator)) {
			return fmt.Errorf("the artifact names a file outside its directory: %q", h.Name)
		}
		if err := writeTarFile(tr, dst, os.FileMode(h.Mode).Perm()|0o600); err != nil {
			return err
		}
		n++
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%d files of %s in %s\n", n, label, out)
	return nil
}

func writeTarFile(r io.Reader, dst string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
