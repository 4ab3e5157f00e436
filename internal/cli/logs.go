package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/client"
	"kiln.dev/kiln/internal/app"
)

func newLogsCmd(e *env) *cobra.Command {
	var follow bool
	var attempt int
	cmd := &cobra.Command{
		Use:   "logs RUN [TASK]",
		Short: "Print the output of a run's tasks (stdout, then stderr)",
		Long: "Print what a task's latest attempt (or --attempt N) wrote to stdout and stderr. Without TASK,\n" +
			"every task's output is printed, each line prefixed with its task. -f follows until the run ends.",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if c := e.remote(); c != nil {
				return remoteLogs(cmd, e, c, args, attempt, follow)
			}
			e.readsBackend = true
			return withRun(cmd, e, args[0], func(a *app.App, run *apiv1.Run) error {
				task := ""
				if len(args) == 2 {
					task = args[1]
					if !hasNode(run, task) {
						return &apiv1.Error{
							Code: apiv1.CodeRunNotFound, Object: "Run/" + args[0], Field: "task",
							Message: fmt.Sprintf("run has no task %q", task),
						}
					}
				}
				if a.Kube != nil {
					return clusterLogs(cmd.Context(), e, a, run, task, attempt, follow)
				}
				t := &tailer{e: e, a: a, task: task, attempt: attempt, prefix: task == "", offsets: map[string]int64{}}
				return t.run(cmd.Context(), run, follow)
			})
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing output until the run ends")
	cmd.Flags().IntVar(&attempt, "attempt", 0, "attempt number (default: the latest)")
	return cmd
}

func hasNode(run *apiv1.Run, name string) bool {
	for _, n := range run.Status.Nodes {
		if n.Name == name {
			return true
		}
	}
	return false
}

// tailer prints new bytes of log files, remembering how far it read.
type tailer struct {
	e       *env
	a       *app.App
	task    string
	attempt int
	prefix  bool
	offsets map[string]int64
}

func (t *tailer) run(ctx context.Context, run *apiv1.Run, follow bool) error {
	for {
		t.printOnce(run)
		if !follow || run.Status.Phase.Done() {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
		fresh, err := t.a.Store.GetRun(ctx, run.ID)
		if err != nil {
			return err
		}
		run = fresh
	}
}

func (t *tailer) printOnce(run *apiv1.Run) {
	for _, n := range run.Status.Nodes {
		if (t.task != "" && n.Name != t.task) || len(n.Attempts) == 0 {
			continue
		}
		number := n.Attempts[len(n.Attempts)-1].Number
		if t.attempt > 0 {
			number = t.attempt
		}
		dir := t.a.AttemptDir(run.ID, n.Name, number)
		for _, path := range app.LogFiles(dir) {
			f := filepath.Base(path)
			label := n.Name
			if proc, _, ok := strings.Cut(f, "."); ok {
				label += "/" + proc
			}
			t.copyNew(path, label, t.prefix || strings.Contains(f, "."))
		}
	}
}

func (t *tailer) copyNew(path, task string, prefix bool) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(t.offsets[path], io.SeekStart); err != nil {
		return
	}
	b, err := io.ReadAll(f)
	if err != nil || len(b) == 0 {
		return
	}
	t.offsets[path] += int64(len(b))
	if !prefix {
		_, _ = t.e.stdout.Write(b)
		return
	}
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i+1], b[i+1:]
		} else {
			b = nil
			line = append(line, '\n')
		}
		fmt.Fprintf(t.e.stdout, "[%s] %s", task, line)
	}
}

// clusterLogs prints logs kept in the cluster's pods: each task's in the
// workflow's order (with -f, each until it ends), every line prefixed
// with its task unless TASK was given.
func clusterLogs(ctx context.Context, e *env, a *app.App, run *apiv1.Run, task string, attempt int, follow bool) error {
	for _, n := range run.Status.Nodes {
		if (task != "" && n.Name != task) || len(n.Attempts) == 0 {
			continue
		}
		number := n.Attempts[len(n.Attempts)-1].Number
		if attempt > 0 {
			number = attempt
		}
		w := e.stdout
		if task == "" {
			w = &prefixWriter{w: e.stdout, prefix: "[" + n.Name + "] "}
		}
		if _, err := a.Logs(ctx, run.ID, n.Name, number, follow, w); err != nil {
			return err
		}
	}
	return nil
}

// prefixWriter prefixes every line written to it; writes are whole lines.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	for line := range bytes.Lines(b) {
		if _, err := io.WriteString(p.w, p.prefix+string(line)); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// remoteLogs prints logs through the API: one task's (followed with -f
// by the server), or every task's, each line prefixed with the task and
// followed with -f by polling until the run ends.
func remoteLogs(cmd *cobra.Command, e *env, c *client.Client, args []string, attempt int, follow bool) error {
	id := apiv1.RunID(args[0])
	if len(args) == 2 {
		return c.Logs(cmd.Context(), id, args[1], attempt, follow, e.stdout)
	}
	printed := map[string]int{} // bytes of each task's log printed so far
	for {
		run, err := c.GetRun(cmd.Context(), id)
		if err != nil {
			return err
		}
		for _, n := range run.Status.Nodes {
			if len(n.Attempts) == 0 {
				continue
			}
			var b bytes.Buffer
			if err := c.Logs(cmd.Context(), id, n.Name, attempt, false, &b); err != nil {
				return err
			}
			fresh := b.String()[min(printed[n.Name], b.Len()):]
			// Print whole lines only while following; the rest comes next time.
			if cut := strings.LastIndexByte(fresh, '\n'); follow && !run.Status.Phase.Done() {
				fresh = fresh[:cut+1]
			}
			printed[n.Name] += len(fresh)
			for _, line := range strings.SplitAfter(fresh, "\n") {
				if line != "" {
					fmt.Fprintf(e.stdout, "[%s] %s", n.Name, line)
				}
			}
		}
		if !follow || run.Status.Phase.Done() {
			return nil
		}
		select {
		case <-cmd.Context().Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}
