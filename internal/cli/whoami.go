package cli

import (
	"fmt"
	"os/user"
	"strings"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/client"
)

// identity is what kiln whoami prints: the server's answer, or, for the
// embedded engine, the local user with every right.
type identity struct {
	client.Whoami
	// Server is the server asked; empty for the embedded engine.
	Server string `json:"server,omitempty"`
}

func newWhoamiCmd(e *env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "whoami",
		Short: "Print who the token names on the server: its name, role and projects",
		Long: "Print the name, role (viewer, editor or admin) and projects of the token the command sends to the\n" +
			"server (--token, KILN_TOKEN or the context's), as kubectl auth whoami does. Without a server the\n" +
			"embedded engine works on this machine's kiln home as the local user, with every right.",
		Args: none("kiln whoami takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			me, err := e.whoami(cmd)
			if err != nil {
				return err
			}
			if done, err := printObject(e.stdout, output, me); done {
				return err
			}
			printIdentity(e, me)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: table (default), json, yaml or jsonpath=TEMPLATE")
	return cmd
}

// whoami asks the server, or describes the local user of the embedded
// engine. A token the server does not know is KLN-4003.
func (e *env) whoami(cmd *cobra.Command) (identity, error) {
	if e.server == "" {
		name := "local user"
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
		return identity{Whoami: client.Whoami{Name: name, Role: "admin", Projects: []string{"*"}, Authenticated: true}}, nil
	}
	me, err := client.New(e.server, e.token()).Whoami(cmd.Context())
	if err != nil {
		return identity{}, err
	}
	if !me.Authenticated {
		msg := "the server " + e.server + " does not know the token, or it was revoked"
		if e.token() == "" {
			msg = "no token was given for the server " + e.server
		}
		return identity{}, apiv1.Errorf(apiv1.CodeUnauthenticated, msg)
	}
	return identity{Whoami: me, Server: e.server}, nil
}

func printIdentity(e *env, me identity) {
	if me.Server == "" {
		fmt.Fprintf(e.stdout, "%s, the local user: the embedded engine works on %s with every right (roles and projects are a server's, --server)\n", me.Name, e.home)
		return
	}
	g := newGrid([]string{"NAME", "ROLE", "PROJECTS", "SERVER"})
	g.add([]string{me.Name, me.Role, strings.Join(me.Projects, ","), me.Server})
	_ = g.write(e.stdout)
}
