package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newPartyCmd(e *env) *cobra.Command {
	party := group("party", "Manage the parties this kiln federates with (their servers run federated workflows' shares)")
	party.AddCommand(newPartyAddCmd(e), newPartyListCmd(e), newPartyRemoveCmd(e))
	return party
}

func newPartyAddCmd(e *env) *cobra.Command {
	var req apiv1.PartyRequest
	var pol policyFlags
	cmd := &cobra.Command{
		Use:   "add NAME --url URL [--credential C]",
		Short: "Register a party (or update it) and print, once, the credential issued to it",
		Long: "Register the party NAME, whose kiln server (kiln serve --party NAME) is reached at --url, and print\n" +
			"the credential this kiln issues to it: give it to the party, whose own kiln party add takes it with\n" +
			"--credential. --credential is the credential the party issued to this kiln (- reads it from\n" +
			"standard input); it may be given later by running kiln party add again, which updates the party\n" +
			"and issues no new credential unless --rotate. The party's server is called first (--no-check: not).\n\n" +
			"What the party's parts of federated runs may do here is its policy (docs/federation.md): --policy FILE\n" +
			"(YAML: commands, secrets, images, maxResources), or --allow-command and --allow-secret. A party\n" +
			"registered without one may run nothing here; given again, a policy replaces the one the party had.",
		Args: one("kiln party add takes the party's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Name = args[0]
			if err := e.partyRequest(cmd, &req); err != nil {
				return err
			}
			var err error
			if req.Policy, err = pol.policy(); err != nil {
				return err
			}
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			added, err := eng.AddParty(cmd.Context(), req)
			if err != nil {
				return err
			}
			e.printPartyAdded(added)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.URL, "url", "", "where the party's kiln server is reached, http(s)://HOST:PORT (needed for a new party)")
	f.StringVar(&req.Credential, "credential", "", "the credential the party issued to this kiln (- reads it from standard input)")
	f.StringVar(&req.Project, "project", "", "the project the party's parts of federated runs go into (default: default, or the one it had)")
	f.BoolVar(&req.Rotate, "rotate", false, "issue the party a new credential; the one it has is refused from then on")
	f.BoolVar(&req.NoCheck, "no-check", false, "register the party without calling its server")
	f.StringVar(&req.Pin, "pin", "", "the certificate the party's https server must present: sha256:<hex>, as its kiln serve --tls-cert prints it (default: the system's roots decide)")
	f.StringVar(&pol.file, "policy", "", "a YAML file of what the party's parts may do here (commands, secrets, images, maxResources); replaces its policy")
	f.StringArrayVar(&pol.commands, "allow-command", nil, "a command line the party's parts may run (a prefix, word by word; \"*\": any); with --allow-secret, replaces its policy")
	f.StringArrayVar(&pol.secrets, "allow-secret", nil, "a secret of the party's project its parts may read")
	return cmd
}

// policyFlags give kiln party add a party's policy.
type policyFlags struct {
	file              string
	commands, secrets []string
}

// policy is the policy the flags give, nil if they give none.
func (f policyFlags) policy() (*apiv1.PartyPolicy, error) {
	if f.file == "" && f.commands == nil && f.secrets == nil {
		return nil, nil
	}
	p := &apiv1.PartyPolicy{}
	if f.file != "" {
		data, err := os.ReadFile(f.file)
		if err != nil {
			return nil, &apiv1.Error{Code: apiv1.CodeRead, File: f.file, Field: "--policy", Message: err.Error()}
		}
		if err := yaml.UnmarshalStrict(data, p); err != nil {
			return nil, &apiv1.Error{
				Code: apiv1.CodeParse, File: f.file, Field: "--policy", Message: yamlMessage(err),
				Hint: "a policy is commands: [...], secrets: [...], images: [...] and maxResources: {cpu, memory, gpu} (docs/federation.md)",
			}
		}
	}
	p.Commands = append(p.Commands, f.commands...)
	p.Secrets = append(p.Secrets, f.secrets...)
	return p, nil
}

// partyRequest completes req from the command line: the credential read
// from standard input with -, and a clear word when --server was taken
// for the party's URL.
func (e *env) partyRequest(cmd *cobra.Command, req *apiv1.PartyRequest) error {
	if req.URL == "" && cmd.Flags().Changed("server") {
		return usagef("kiln party add %s: give the party's URL with --url; --server %s names the kiln server this command talks to (as KILN_SERVER does)",
			req.Name, e.server)
	}
	if req.Credential != "-" {
		return nil
	}
	b, err := io.ReadAll(e.stdin)
	if err != nil {
		return err
	}
	req.Credential = strings.TrimSpace(string(b))
	if req.Credential == "" {
		return usagef("kiln party add %s --credential -: standard input holds no credential", req.Name)
	}
	return nil
}

// printPartyAdded says what was done on standard error, and prints the
// credential issued, alone, on standard output.
func (e *env) printPartyAdded(added *apiv1.PartyAdded) {
	p := added.Party
	verb := "updated"
	if added.Created {
		verb = "registered"
	}
	fmt.Fprintf(e.stderr, "party %s %s: %s, project %s, its credential %s\n", p.Name, verb, p.URL, p.Project, p.Credential)
	for _, w := range added.Warnings {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
	if added.Credential == "" {
		fmt.Fprintf(e.stderr, "no new credential was issued to %s (--rotate issues one)\n", p.Name)
		return
	}
	self, url := added.Self, added.SelfURL
	if self == "" {
		self, url = "<this party>", "<this server's URL>"
	}
	fmt.Fprintf(e.stderr, "the credential issued to %s follows, shown only now: on %s's server run kiln party add %s --url %s --credential <it>\n", p.Name, p.Name, self, url)
	fmt.Fprintln(e.stdout, added.Credential)
}

func newPartyListCmd(e *env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the registered parties (never their credentials: only whether the one each issued is set)",
		Args:  none("kiln party list takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			parties, err := eng.Parties(cmd.Context())
			if err != nil {
				return err
			}
			if ok, err := printList(e.stdout, output, "Party", parties); ok {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tURL\tPROJECT\tCREDENTIAL\tMAY RUN\tAGE")
			for _, p := range parties {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.URL, p.Project, p.Credential, mayRun(p.Policy), age(p.CreatedAt))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml or jsonpath=TEMPLATE (default a table)")
	return cmd
}

func newPartyRemoveCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Forget a party: the credential issued to it is refused from then on",
		Args:  one("kiln party remove takes the party's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			if err := eng.RemoveParty(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "party %s removed\n", args[0])
			return nil
		},
	}
}

// mayRun sums up a party's policy for kiln party list.
func mayRun(p *apiv1.PartyPolicy) string {
	if p == nil || len(p.Commands) == 0 {
		return "nothing (no policy)"
	}
	out := plural(len(p.Commands), "command line")
	if slices.Contains(p.Commands, "*") {
		out = "any command"
	}
	return out + ", " + plural(len(p.Secrets), "secret")
}

// yamlMessage is what a YAML decoding error says, without the layers of
// the YAML-to-JSON conversion it went through.
func yamlMessage(err error) string {
	msg := err.Error()
	for _, layer := range []string{"error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
		msg = strings.TrimPrefix(msg, layer)
	}
	return msg
}
