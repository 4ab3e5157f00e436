package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/client"
	"kiln.dev/kiln/internal/buildinfo"
)

// versions is what kiln version prints as JSON or YAML: this binary's
// build and, with --server, the server's.
type versions struct {
	Client apiv1.Version  `json:"client"`
	Server *apiv1.Version `json:"server,omitempty"`
}

func newVersionCmd(e *env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print this kiln's version, and the server's with --server",
		Args:  none("kiln version takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := versions{Client: buildinfo.Read()}
			var serverErr error
			if e.server != "" {
				s, err := client.New(e.server, e.token()).Version(cmd.Context())
				if err == nil {
					v.Server = &s
				}
				serverErr = err
			}
			// The client's version comes first and whatever the server
			// answers, as kubectl version prints it.
			if done, err := printObject(e.stdout, output, v); done {
				return errors.Join(err, serverErr)
			}
			fmt.Fprintln(e.stdout, "client: "+buildinfo.Line(v.Client))
			if v.Server != nil {
				fmt.Fprintln(e.stdout, "server: "+buildinfo.Line(*v.Server)+" at "+e.server)
			}
			return serverErr
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml or jsonpath=TEMPLATE")
	return cmd
}
