package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"kiln.dev/kiln/internal/app"
)

func newSecretCmd(e *env) *cobra.Command {
	var project string
	secret := &cobra.Command{Use: "secret", Short: "Manage secrets that task environments reference (valueFrom: {secret: NAME})"}
	secret.PersistentFlags().StringVar(&project, "project", "default", "the project the secret belongs to")
	set := &cobra.Command{
		Use:   "set NAME",
		Short: "Set a secret to the value read from standard input (never from an argument)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := io.ReadAll(e.stdin)
			if err != nil {
				return err
			}
			value := strings.TrimSuffix(string(b), "\n")
			if c := e.remote(); c != nil {
				return c.SetSecret(cmd.Context(), project, args[0], value)
			}
			return withStore(cmd, e, func(a *app.App) error { return a.Store.SetSecret(cmd.Context(), project, args[0], value) })
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List a project's secrets (names only)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var names []string
			var err error
			if c := e.remote(); c != nil {
				names, err = c.SecretNames(cmd.Context(), project)
			} else {
				err = withStore(cmd, e, func(a *app.App) error {
					names, err = a.Store.SecretNames(cmd.Context(), project)
					return err
				})
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
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if c := e.remote(); c != nil {
				return c.DeleteSecret(cmd.Context(), project, args[0])
			}
			return withStore(cmd, e, func(a *app.App) error { return a.Store.DeleteSecret(cmd.Context(), project, args[0]) })
		},
	}
	secret.AddCommand(set, list, del)
	return secret
}
