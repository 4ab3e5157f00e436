package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newLogsCmd(e *env) *cobra.Command {
	var follow bool
	var attempt int
	cmd := &cobra.Command{
		Use:   "logs RUN [TASK]",
		Short: "Print the output of a run's tasks (stdout, then stderr)",
		Long: "Print what a task's latest attempt (or --attempt N) wrote to stdout and stderr; the processes of a\n" +
			"training job each prefix their lines with their name. Without TASK, every task's output is printed,\n" +
			"each line prefixed with its task. -f follows until the task (or the run) ends.",
		Args: between(1, 2, "kiln logs takes a run and, optionally, one of its tasks: kiln logs RUN [TASK]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if attempt < 0 {
				return usagef("--attempt %d is not an attempt number", attempt)
			}
			e.readsBackend = true
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			q := apiv1.LogQuery{Run: apiv1.RunID(args[0]), Attempt: attempt, Follow: follow}
			if len(args) == 2 {
				q.Task = args[1]
				return eng.Logs(cmd.Context(), q, e.stdout)
			}
			return allLogs(cmd.Context(), eng, q, e.stdout, e.stderr)
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing output until the task, or the run, ends")
	cmd.Flags().IntVar(&attempt, "attempt", 0, "attempt number (default: the latest)")
	return cmd
}

// allLogs prints every task's output, each line prefixed with its task:
// task by task, or, following, every task at once as it starts, until
// the run ends. It notes on notes the tasks that ran nothing in the run
// (served from the cache, or reused by a rerun), and where their output is.
func allLogs(ctx context.Context, eng engine, q apiv1.LogQuery, w, notes io.Writer) error {
	out := &lineWriter{w: w}
	if !q.Follow {
		run, err := eng.GetRun(ctx, q.Run)
		if err != nil {
			return err
		}
		for _, n := range run.Status.Nodes {
			if len(n.Attempts) == 0 {
				noteRanNothing(notes, &n)
				continue
			}
			tq := q
			tq.Task = n.Name
			pw := out.prefixed("[" + n.Name + "] ")
			if err := eng.Logs(ctx, tq, pw); err != nil {
				return err
			}
			pw.flush()
		}
		return nil
	}
	return followAll(ctx, eng, q, out)
}

// followAll follows each task's output from when it starts.
func followAll(ctx context.Context, eng engine, q apiv1.LogQuery, out *lineWriter) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	started := map[string]bool{}
	defer wg.Wait()
	for {
		run, err := eng.GetRun(ctx, q.Run)
		if err != nil {
			return err
		}
		for _, n := range run.Status.Nodes {
			if len(n.Attempts) == 0 || started[n.Name] {
				continue
			}
			started[n.Name] = true
			tq := q
			tq.Task = n.Name
			wg.Go(func() {
				pw := out.prefixed("[" + tq.Task + "] ")
				err := eng.Logs(ctx, tq, pw)
				pw.flush()
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			})
		}
		if run.Status.Phase.Done() {
			wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			return firstErr(errs)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// lineWriter writes whole lines from several goroutines, each through a
// prefixed writer of its own.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) prefixed(prefix string) *prefixWriter {
	return &prefixWriter{out: l, prefix: prefix}
}

// prefixWriter prefixes each line written to it, holding back an
// unfinished one until its end comes (or flush).
type prefixWriter struct {
	out     *lineWriter
	prefix  string
	partial []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.partial = append(p.partial, b...)
	cut := bytes.LastIndexByte(p.partial, '\n') + 1
	if cut == 0 {
		return len(b), nil
	}
	err := p.emit(p.partial[:cut])
	p.partial = append([]byte(nil), p.partial[cut:]...)
	return len(b), err
}

func (p *prefixWriter) emit(lines []byte) error {
	var buf bytes.Buffer
	for line := range bytes.Lines(lines) {
		buf.WriteString(p.prefix)
		buf.Write(line)
	}
	p.out.mu.Lock()
	defer p.out.mu.Unlock()
	_, err := p.out.w.Write(buf.Bytes())
	return err
}

// flush writes an unfinished last line, ended by a newline.
func (p *prefixWriter) flush() {
	if len(p.partial) > 0 {
		_ = p.emit(append(p.partial, '\n'))
		p.partial = nil
	}
}

// noteRanNothing says where the output of task n is, if it ran nothing
// in its run because its result came from elsewhere.
func noteRanNothing(w io.Writer, n *apiv1.NodeStatus) {
	switch c, r := n.Cache, n.Reused; {
	case c != nil && c.Result == apiv1.CacheHit:
		fmt.Fprintf(w, "[%s] ran nothing here: its result came from the cache (kiln logs %s %s)\n", n.Name, c.SourceRun, c.SourceNode)
	case r != nil:
		fmt.Fprintf(w, "[%s] ran nothing here: reused from run %s (kiln logs %s %s)\n", n.Name, r.Run, r.Run, r.Node)
	}
}
