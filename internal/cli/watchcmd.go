package cli

import (
	"github.com/spf13/cobra"
)

func newWatchCmd(e *env) *cobra.Command {
	var quiet bool
	cmd := &cobra.Command{
		Use:   "watch RUN...",
		Short: "Show runs live, as kiln run does, until they end; exit 0 only if every one succeeded",
		Long: "Re-attach to runs: the live table kiln run shows on a terminal (one line per event otherwise), then\n" +
			"each run's summary, as kiln run prints it. Exits 0 when every run succeeded, 1 when one did not, and\n" +
			"130 at Ctrl-C, which leaves without touching the runs (kiln cancel stops one).\n\n" +
			"With --server it watches the server's runs. Without one it reads this home's store and follows the\n" +
			"runs a kiln run or kiln resume on this machine works; a run no engine works stays as it is until\n" +
			"kiln resume RUN finishes it.",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("kiln watch needs the runs to watch: kiln watch RUN... (kiln get runs lists them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			ids, err := existingRuns(cmd.Context(), eng, args)
			if err != nil {
				return err
			}
			// Reading the store, this process works no run: it reads each
			// one until it ends, not until an engine here lets it go.
			return waitRuns(e, storeReader{eng}, ids, quiet)
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the final summary")
	return cmd
}

// storeReader is an engine seen only through its engine methods: a
// watcher polls it, as it polls a server, and never waits on the runs
// this process's engine works (it works none).
type storeReader struct{ engine }
