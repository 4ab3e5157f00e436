package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// cliContext is one entry of the configuration file's contexts: a kiln
// server, the token to send it and the project commands default to.
type cliContext struct {
	Name    string `json:"name"`
	Server  string `json:"server,omitempty"`
	Token   string `json:"token,omitempty"`
	Project string `json:"project,omitempty"`
}

// contextFlags are the root's flags that pick a server and a token.
type contextFlags struct {
	name     string // --context
	token    string // --token
	resolved bool
}

func (c *contextFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&c.name, "context", "", "the context of the configuration file to use: its server, token and project (default its current-context)")
	fs.StringVar(&c.token, "token", "", "the API token to send the server (env KILN_TOKEN; default the context's)")
}

// resolveContext settles the server, token and default project of this
// command, each from the first that has it: its flag (--server,
// --token), the context --context names, its environment variable
// (KILN_SERVER, KILN_TOKEN), then the configuration file's
// current-context. Without any, commands use the embedded engine. A
// --context (or current-context) the file does not have is KLN-4052.
func (e *env) resolveContext() error {
	c := &e.ctx
	if c.resolved {
		return nil
	}
	c.resolved = true
	cfg, path, err := e.backend.load(e.home)
	if err != nil {
		return err
	}
	explicit := c.name != ""
	name := c.name
	if name == "" {
		name = cfg.CurrentContext
	}
	var cur cliContext
	if name != "" {
		found, ok := findContext(cfg.Contexts, name)
		if !ok {
			return noContext(name, path, cfg.Contexts)
		}
		cur = found
	}
	e.contextProject = cur.Project
	if !e.serverFlag.Changed {
		e.server = pick(explicit, cur.Server, os.Getenv("KILN_SERVER"))
	}
	if !e.tokenFlagChanged() {
		c.token = pick(explicit, cur.Token, os.Getenv("KILN_TOKEN"))
	}
	return nil
}

// pick is the context's value over the environment's when the context was
// named on the command line, else the environment's over the context's.
func pick(explicit bool, fromContext, fromEnv string) string {
	if explicit && fromContext != "" {
		return fromContext
	}
	if fromEnv != "" {
		return fromEnv
	}
	return fromContext
}

func findContext(list []cliContext, name string) (cliContext, bool) {
	for _, c := range list {
		if c.Name == name {
			return c, true
		}
	}
	return cliContext{}, false
}

func noContext(name, path string, list []cliContext) error {
	var names []string
	for _, c := range list {
		names = append(names, c.Name)
	}
	have := "it has none"
	if len(names) > 0 {
		have = "it has: " + strings.Join(names, ", ")
	}
	if path == "" {
		path = "KILN_HOME/config.yaml"
	}
	return &apiv1.Error{Code: apiv1.CodeNoContext, File: path, Field: "contexts", Message: fmt.Sprintf("no context %q; %s", name, have)}
}

// applyContextProject sets cmd's --project to the context's project
// when the command has the flag and it was not given.
func (e *env) applyContextProject(cmd *cobra.Command) {
	f := cmd.Flags().Lookup("project")
	if f == nil || f.Changed || e.contextProject == "" {
		return
	}
	_ = f.Value.Set(e.contextProject)
}

// token is the API token to send the server.
func (e *env) token() string {
	if !e.ctx.resolved {
		_ = e.resolveContext()
	}
	return e.ctx.token
}

func (e *env) tokenFlagChanged() bool { return e.tokenFlag != nil && e.tokenFlag.Changed }
