package cli

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/server"
	"kiln.dev/kiln/internal/store"
)

func newTokenCmd(e *env) *cobra.Command {
	token := group("token", "Manage API tokens (on this kiln home)")
	var role string
	var projects []string
	var output string
	create := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a token and print it; it is shown only this once",
		Args:  one("kiln token create takes the token's name: kiln token create NAME [--role R] [--project P]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(cmd, e, reading, nil, func(a *app.App) error {
				raw, t, err := server.CreateToken(cmd.Context(), a.Store, args[0], role, projects)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "token %s (%s, %s) created; it is shown only now:\n", t.ID, t.Role, strings.Join(t.Projects, ","))
				fmt.Fprintln(e.stdout, raw)
				return nil
			})
		},
	}
	create.Flags().StringVar(&role, "role", "viewer", "viewer, editor or admin")
	create.Flags().StringSliceVar(&projects, "project", []string{"default"}, "projects the token may touch (* for all)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List tokens (never their values)",
		Args:  none("kiln token list takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withApp(cmd, e, reading, nil, func(a *app.App) error {
				tokens, err := a.Store.ListTokens(cmd.Context())
				if err != nil {
					return err
				}
				if ok, err := printList(e.stdout, output, "Token", tokens); ok {
					return err
				}
				tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tROLE\tPROJECTS\tCREATED\tREVOKED")
				for _, t := range tokens {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\n", t.ID, t.Name, t.Role, strings.Join(t.Projects, ","),
						t.CreatedAt.Local().Format("2006-01-02 15:04"), t.Revoked)
				}
				return tw.Flush()
			})
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token",
		Args:  one("kiln token revoke takes the token's ID (kiln token list shows it)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(cmd, e, reading, nil, func(a *app.App) error {
				err := a.Store.RevokeToken(cmd.Context(), args[0])
				if errors.Is(err, store.ErrNotFound) {
					return &apiv1.Error{Code: apiv1.CodeNoToken, Object: "Token/" + args[0], Message: "no such token"}
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "token %s revoked\n", args[0])
				return nil
			})
		},
	}
	list.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml or jsonpath=TEMPLATE (default a table)")
	token.AddCommand(create, list, revoke)
	return token
}
