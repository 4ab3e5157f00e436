package cli

import (
	"fmt"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newGetQuotasCmd(e *env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "quotas [PROJECT]",
		Aliases: []string{"quota", "projectquotas", "projectquota"},
		Short:   "List the projects' quotas (ProjectQuota, stored with kiln apply), or show one project's",
		Args:    between(0, 1, "kiln get quotas takes at most one project's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			list, err := eng.ListQuotas(cmd.Context())
			if err != nil {
				return err
			}
			var shown any = listDoc{APIVersion: apiv1.APIVersion, Kind: apiv1.KindProjectQuota + "List", Items: nonNil(list)}
			if len(args) == 1 {
				i := slices.IndexFunc(list, func(q apiv1.ProjectQuota) bool { return q.Metadata.Name == args[0] })
				if i < 0 {
					return &apiv1.Error{Code: apiv1.CodeNoQuota, Object: apiv1.KindProjectQuota + "/" + args[0], Message: fmt.Sprintf("project %q has no quota", args[0])}
				}
				list, shown = list[i:i+1], list[i]
			}
			if output == "yaml" {
				return printQuotaDocs(e, list)
			}
			if done, err := printObject(e.stdout, output, shown); done {
				return err
			}
			return printQuotas(e, list)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml or jsonpath=TEMPLATE (documents separated by ---, which kiln apply takes back)")
	return cmd
}

// printQuotaDocs writes the quotas as YAML documents separated by ---,
// as kiln apply -f reads them.
func printQuotaDocs(e *env, list []apiv1.ProjectQuota) error {
	for i, q := range list {
		if i > 0 {
			fmt.Fprintln(e.stdout, "---")
		}
		if _, err := printObject(e.stdout, "yaml", q); err != nil {
			return err
		}
	}
	return nil
}

func newDeleteQuotaCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "quota PROJECT",
		Aliases: []string{"quotas", "projectquota"},
		Short:   "Delete a project's quota (needs a token of every project); the engine drops it within 2 s",
		Args:    one("kiln delete quota takes the project's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			if err := eng.DeleteQuota(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "ProjectQuota/%s deleted\n", args[0])
			return nil
		},
	}
}

func printQuotas(e *env, list []apiv1.ProjectQuota) error {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROJECT\tCPU\tMEMORY\tGPU\tRUNS\tWEIGHT\tBORROWING\tPREEMPTION")
	for _, q := range list {
		s := q.Spec
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%t\t%s\n", q.Metadata.Name, quotaCell(s.CPU), quotaCell(s.Memory), quotaCell(s.GPU),
			quotaCell(runsCell(s.Runs)), s.WeightOrDefault(), s.MayBorrow(), orDefault(s.Preemption, apiv1.PreemptNever))
	}
	return tw.Flush()
}

func quotaCell[S ~string](s S) string { return orDefault(string(s), "-") }

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func runsCell(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}
