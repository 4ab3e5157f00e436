package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/server"
)

func newTokenCmd(e *env) *cobra.Command {
	token := group("token", "Manage API tokens (on this kiln home)")
	var role string
	var projects []string
	create := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a token and print it; it is shown only this once",
		Args:  cobra.ExactArgs(1),
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
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withApp(cmd, e, reading, nil, func(a *app.App) error {
				tokens, err := a.Store.ListTokens(cmd.Context())
				if err != nil {
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
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(cmd, e, reading, nil, func(a *app.App) error {
				if err := a.Store.RevokeToken(cmd.Context(), args[0]); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "token %s revoked\n", args[0])
				return nil
			})
		},
	}
	token.AddCommand(create, list, revoke)
	return token
}
