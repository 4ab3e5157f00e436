package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// backendOnly are the global flags that choose and configure the backend
// tasks run on: only a command that starts an engine, or reads what the
// backend keeps, uses them. Every command still takes them (scripts
// that pass them everywhere keep working); help lists them only where
// they apply.
var backendOnly = []string{"backend", "kubeconfig", "kube-context", "namespace", "kiln-image", "gang-scheduler", "clean-policy", "clean-ttl", "slurm-dir", "partition", "account", "qos"}

// startsEngine are the commands, by path, that start an engine or read
// the backend: their help lists backendOnly.
var startsEngine = map[string]bool{
	"kiln run": true, "kiln resume": true, "kiln serve": true, "kiln retry": true, "kiln rerun": true,
	"kiln cancel": true, "kiln stop": true, "kiln delete run": true, "kiln gc": true, "kiln logs": true,
	"kiln validate": true, "kiln supervise": true, "kiln apply": true,
}

// wireHelp makes help list backendOnly only on the commands that start
// an engine, so that kiln --help and, say, kiln get runs --help show the
// flags that matter there.
func wireHelp(root *cobra.Command) {
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if !startsEngine[c.CommandPath()] {
			restore := hideFlags(root.PersistentFlags(), backendOnly)
			defer restore()
		}
		help(c, args)
	})
}

// hideFlags hides the flags of fs named names that are shown, and
// returns the function that shows them again.
func hideFlags(fs *pflag.FlagSet, names []string) func() {
	var hidden []*pflag.Flag
	for _, n := range names {
		if f := fs.Lookup(n); f != nil && !f.Hidden {
			f.Hidden = true
			hidden = append(hidden, f)
		}
	}
	return func() {
		for _, f := range hidden {
			f.Hidden = false
		}
	}
}
