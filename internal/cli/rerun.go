package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newRerunCmd(e *env) *cobra.Command {
	var pool poolFlags
	var params []string
	var cacheMode string
	var quiet bool
	var from, only, until string
	cmd := &cobra.Command{
		Use:   "rerun RUN (--from NODE | --only NODE | --until NODE)",
		Short: "Run a finished run again, from, only or until one of its tasks, as a new run, and watch it",
		Long: "Makes a new run from RUN's stored spec and params (never the file on disk, which may have changed\n" +
			"since), linked to RUN, and watches it as kiln run does. RUN may have succeeded, failed or been cancelled.\n" +
			"  --from NODE   NODE and every task downstream of it run again; the other tasks that succeeded\n" +
			"                in RUN are reused (their outputs and artifacts), the others run again; onExit runs.\n" +
			"  --only NODE   NODE alone runs, with the inputs it had: the tasks it depends on are reused (each\n" +
			"                must have succeeded), the others are not run, nor onExit.\n" +
			"  --until NODE  NODE and the tasks it depends on run; the others are not run; onExit runs.\n" +
			"NODE is a top-level task (for a map's item such as sweep.3, name sweep). -p name=value changes a\n" +
			"param for the rerun; reused tasks keep their outputs. kiln retry, by contrast, runs the failed\n" +
			"tasks of the same run again. Exits 0 only if the new run succeeds.",
		Args: one("kiln rerun takes the ID of one run: kiln rerun RUN --from NODE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := rerunRequest(from, only, until, params)
			if err != nil {
				return err
			}
			if req.Cache, err = parseCacheMode(cacheMode); err != nil {
				return err
			}
			eng, done, err := e.open(cmd.Context(), working, &pool)
			if err != nil {
				return err
			}
			defer done()
			run, err := eng.Rerun(cmd.Context(), apiv1.RunID(args[0]), req)
			if err != nil {
				return err
			}
			if !quiet {
				writeRerunPlan(e.stdout, run)
			}
			return watchRuns(e, eng, []apiv1.RunID{run.ID}, quiet)
		},
	}
	pool.add(cmd)
	cmd.Flags().StringVar(&from, "from", "", "run NODE and everything downstream of it again, reusing the rest")
	cmd.Flags().StringVar(&only, "only", "", "run NODE alone, on the outputs its upstream tasks had")
	cmd.Flags().StringVar(&until, "until", "", "run NODE and the tasks it depends on, and nothing else")
	cmd.Flags().StringArrayVarP(&params, "param", "p", nil, "change a workflow parameter for the rerun, name=value (repeatable)")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the final summary")
	cmd.Flags().StringVar(&cacheMode, "cache", "overwrite", "how the tasks that run use the cache: overwrite (run, and replace stored results), on (reuse them) or off")
	return cmd
}

// rerunRequest is the request the flags make: exactly one of the modes,
// with its node, and the params.
func rerunRequest(from, only, until string, params []string) (apiv1.RerunRequest, error) {
	var req apiv1.RerunRequest
	var set []string
	for _, m := range []struct {
		mode apiv1.RerunMode
		node string
	}{{apiv1.RerunFrom, from}, {apiv1.RerunOnly, only}, {apiv1.RerunUntil, until}} {
		if m.node != "" {
			req.Mode, req.Node = m.mode, m.node
			set = append(set, "--"+string(m.mode))
		}
	}
	if len(set) != 1 {
		return req, usagef("kiln rerun takes exactly one of --from, --only and --until, with a task's name (got %s)", orNone(set))
	}
	given, err := parseParams(params)
	if err != nil {
		return req, err
	}
	if len(given) > 0 {
		req.Params = given
	}
	return req, nil
}

func orNone(flags []string) string {
	if len(flags) == 0 {
		return "none"
	}
	return strings.Join(flags, " and ")
}

// writeRerunPlan says which of a new rerun's tasks are reused, which run
// and which are not run.
func writeRerunPlan(w io.Writer, run *apiv1.Run) {
	var reused, runs, out []string
	for _, n := range run.Status.Nodes {
		switch {
		case n.Parent != "":
		case n.Reused != nil:
			reused = append(reused, n.Name)
		case n.Phase == apiv1.PhaseSkipped:
			out = append(out, n.Name)
		default:
			runs = append(runs, n.Name)
		}
	}
	fmt.Fprintf(w, "%s reruns %s\n", run.ID, rerunOfLine(run.RerunOf))
	for _, l := range []struct {
		what  string
		names []string
	}{{"runs", runs}, {"reused", reused}, {"not run", out}} {
		if len(l.names) > 0 {
			fmt.Fprintf(w, "  %-8s %s\n", l.what+":", strings.Join(l.names, ", "))
		}
	}
}

// rerunOfLine is `SOURCE (--from NODE)`.
func rerunOfLine(r *apiv1.RerunOf) string {
	return fmt.Sprintf("%s (--%s %s)", r.Run, r.Mode, r.Node)
}
