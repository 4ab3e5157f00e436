package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

func newSecretCmd(e *env) *cobra.Command {
	var project, output string
	secret := group("secret", "Manage secrets that task environments reference (valueFrom: {secret: NAME})")
	secret.PersistentFlags().StringVar(&project, "project", "default", "the project the secret belongs to")
	set := &cobra.Command{
		Use:   "set NAME",
		Short: "Set a secret to the value read from standard input (never from an argument)",
		Args:  one("kiln secret set takes the secret's name; its value comes on standard input"),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := io.ReadAll(e.stdin)
			if err != nil {
				return err
			}
			value := strings.TrimSuffix(string(b), "\n")
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			return eng.SetSecret(cmd.Context(), project, args[0], value)
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List a project's secrets (names only)",
		Args:  none("kiln secret list takes no arguments; pick the project with --project"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			names, err := eng.SecretNames(cmd.Context(), project)
			if err != nil {
				return err
			}
			if output != "" {
				items := make([]secretItem, len(names))
				for i, n := range names {
					items[i] = secretItem{Name: n, Project: project}
				}
				_, err := printList(e.stdout, output, "Secret", items)
				return err
			}
			for _, n := range names {
				fmt.Fprintln(e.stdout, n)
			}
			return err
		},
	}
	del := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a secret",
		Args:  one("kiln secret delete takes the secret's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			return eng.DeleteSecret(cmd.Context(), project, args[0])
		},
	}
	list.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml or jsonpath=TEMPLATE (default the names, one a line)")
	secret.AddCommand(set, list, del)
	return secret
}

// secretItem is a secret as kiln secret list -o json prints it: its name
// and project, never its value.
type secretItem struct {
	Name    string `json:"name"`
	Project string `json:"project"`
}
