package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newMessagesCmd(e *env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "messages RUN",
		Short: "List what a party's part of a federated run sent and received through the federation channel",
		Long: "List the messages the shares of a party's part (RUN is the part, <run>-<party>) sent to other parties'\n" +
			"shares and received from them through the federation channel: when, which task and attempt, the other\n" +
			"party and its role, the message's name, size and SHA-256, and when it was taken. The bytes are never\n" +
			"shown. Each party logs its own end: the same message appears at the sender and at the receiver.",
		Args:              one("kiln messages takes a run: a party's part of a federated run"),
		ValidArgsFunction: completeRunTask(e),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			log, err := eng.Messages(cmd.Context(), apiv1.RunID(args[0]))
			if err != nil {
				return err
			}
			if ok, err := printObject(e.stdout, output, apiv1.ChannelLog{Items: nonNilMessages(log)}); ok {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tWAY\tTASK\tATTEMPT\tPEER\tNAME\tSIZE\tDIGEST\tTAKEN")
			for _, m := range log {
				way := "to"
				if m.Direction == apiv1.ChannelReceived {
					way = "from"
				}
				taken := "-"
				if m.Taken != nil {
					taken = m.Taken.Local().Format(time.TimeOnly)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s (%s)\t%d\t%s (%s)\t%s\t%d\t%.19s\t%s\n", m.At.Local().Format(time.TimeOnly), way, m.Task, m.Role, m.Attempt,
					m.Party, m.PeerRole, m.Name, m.Size, m.Digest, taken)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml or jsonpath=TEMPLATE (default a table)")
	return cmd
}

func nonNilMessages(l []apiv1.ChannelMessage) []apiv1.ChannelMessage {
	if l == nil {
		return []apiv1.ChannelMessage{}
	}
	return l
}
