package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newGetQuotasCmd(e *env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "quotas",
		Aliases: []string{"quota", "projectquotas", "projectquota"},
		Short:   "List the projects' quotas (ProjectQuota, stored with kiln apply)",
		Args:    none("kiln get quotas takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			list, err := eng.ListQuotas(cmd.Context())
			if err != nil {
				return err
			}
			if done, err := printObject(e.stdout, output, list); done {
				return err
			}
			return printQuotas(e, list)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml")
	return cmd
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
