package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	yaml "go.yaml.in/yaml/v3"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newConfigCmd(e *env) *cobra.Command {
	cfg := group("config", "Show and switch the contexts of the configuration file (servers, tokens, projects)")
	cfg.Long = "The configuration file (KILN_HOME/config.yaml, or --config) lists contexts, as kubectl's kubeconfig does:\n\n" +
		"  contexts:\n  - {name: prod, server: https://kiln.example.com, token: kiln_..., project: vision}\n" +
		"  current-context: prod\n\n" +
		"A command talks to the current context's server (or --context NAME's), sending its token, with its\n" +
		"project as the default of --project. --server, --token and KILN_SERVER, KILN_TOKEN still win over\n" +
		"the current context; --context wins over the environment."
	cfg.AddCommand(newGetContextsCmd(e), newUseContextCmd(e), newCurrentContextCmd(e))
	return cfg
}

func newGetContextsCmd(e *env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "get-contexts",
		Short: "List the contexts: name, server, project, and whether a token is set (never the token)",
		Args:  none("kiln config get-contexts takes no arguments"),
		RunE: func(*cobra.Command, []string) error {
			cfg, _, err := e.backend.load(e.home)
			if err != nil {
				return err
			}
			if output == "name" {
				for _, c := range cfg.Contexts {
					fmt.Fprintln(e.stdout, c.Name)
				}
				return nil
			}
			if done, err := printList(e.stdout, output, "Context", contextViews(cfg)); done {
				return err
			}
			g := newGrid([]string{"CURRENT", "NAME", "SERVER", "PROJECT", "TOKEN"})
			for _, c := range cfg.Contexts {
				cur, tok := "", "-"
				if c.Name == cfg.CurrentContext {
					cur = "*"
				}
				if c.Token != "" {
					tok = "set"
				}
				g.add([]string{cur, c.Name, orDash(c.Server), orDash(c.Project), tok})
			}
			return g.write(e.stdout)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: table (default), json, yaml (tokens as set or not, never shown) or name (the context names alone)")
	return cmd
}

func newUseContextCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "use-context NAME",
		Short: "Make NAME the current context (written to the configuration file as current-context)",
		Args:  between(1, 1, "kiln config use-context takes one context name"),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cfg, _, _ := e.backend.load(e.home)
			var names []cobra.Completion
			for _, c := range cfg.Contexts {
				names = append(names, c.Name)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, path, err := e.backend.load(e.home)
			if err != nil {
				return err
			}
			if _, ok := findContext(cfg.Contexts, args[0]); !ok {
				return noContext(args[0], path, cfg.Contexts)
			}
			if err := setCurrentContext(path, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Switched to context %q.\n", args[0])
			return nil
		},
	}
}

func newCurrentContextCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "current-context",
		Short: "Print the current context's name",
		Args:  none("kiln config current-context takes no arguments"),
		RunE: func(*cobra.Command, []string) error {
			cfg, path, err := e.backend.load(e.home)
			if err != nil {
				return err
			}
			if cfg.CurrentContext == "" {
				if path == "" {
					path = filepath.Join(e.home, "config.yaml")
				}
				return &apiv1.Error{Code: apiv1.CodeNoContext, File: path, Field: "current-context", Message: "no current context is set"}
			}
			fmt.Fprintln(e.stdout, cfg.CurrentContext)
			return nil
		},
	}
}

// setCurrentContext writes current-context: name into the file at path,
// keeping the rest of it byte for byte (comments, order and indentation)
// when it can change or add that one line.
func setCurrentContext(path, name string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return &apiv1.Error{Code: apiv1.CodeParse, File: path, Message: err.Error()}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return &apiv1.Error{Code: apiv1.CodeParse, File: path, Message: "the file is not a YAML mapping"}
	}
	out, ok := editCurrentContext(data, name)
	if !ok {
		// A file the line edit cannot change (a flow mapping): written
		// again from its nodes, comments kept.
		setKey(doc.Content[0], "current-context", name)
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(&doc); err != nil {
			return err
		}
		out = buf.Bytes()
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, info.Mode().Perm()); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// setKey sets key to a string value in mapping m, adding it at the end
// if it is not there.
func setKey(m *yaml.Node, key, value string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
			return
		}
	}
	m.Content = append(m.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value})
}
