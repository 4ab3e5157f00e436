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
	var f logFlags
	cmd := &cobra.Command{
		Use:   "logs RUN [TASK]",
		Short: "Print the output of a run's tasks (stdout, then stderr)",
		Long: "Print what a task's latest attempt (or --attempt N) wrote to stdout and stderr; the processes of a\n" +
			"training job each prefix their lines with their name. Without TASK, every task's output is printed,\n" +
			"each line prefixed with its task. -f follows until the task (or the run) ends. --node TASK names the\n" +
			"task as argo logs RUN --node does. --tail N keeps each process's last N lines, --since 10m (or an\n" +
			"RFC 3339 time) the lines written since then, --timestamps starts each line with the time it was written.",
		Args:              between(1, 2, "kiln logs takes a run and, optionally, one of its tasks: kiln logs RUN [TASK] (or --node TASK)"),
		ValidArgsFunction: completeRunTask(e),
		RunE: func(cmd *cobra.Command, args []string) error {
			q, err := f.query(args, time.Now())
			if err != nil {
				return err
			}
			e.readsBackend = true
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			if q.Task != "" {
				return eng.Logs(cmd.Context(), q, e.stdout)
			}
			return allLogs(cmd.Context(), eng, q, e.stdout, e.stderr)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&f.follow, "follow", "f", false, "keep printing output until the task, or the run, ends")
	fl.IntVar(&f.attempt, "attempt", 0, "attempt number (default: the latest)")
	fl.StringVar(&f.node, "node", "", "the task whose output to print, as argo logs --node (the same as kiln logs RUN TASK)")
	fl.IntVar(&f.tail, "tail", 0, "print only the last N lines of each process's output (default: all)")
	fl.StringVar(&f.since, "since", "", "print only the lines written since then: a duration ago (10m) or an RFC 3339 time")
	fl.BoolVar(&f.timestamps, "timestamps", false, "start each line with the time it was written (RFC 3339, nanoseconds)")
	_ = cmd.RegisterFlagCompletionFunc("node", completeNodeFlag(e))
	return cmd
}

// logFlags are kiln logs' flags.
type logFlags struct {
	follow, timestamps bool
	attempt, tail      int
	node, since        string
}

// query checks the flags and arguments and turns them into a LogQuery.
func (f *logFlags) query(args []string, now time.Time) (apiv1.LogQuery, error) {
	q := apiv1.LogQuery{Run: apiv1.RunID(args[0]), Attempt: f.attempt, Follow: f.follow, Tail: f.tail, Timestamps: f.timestamps}
	switch {
	case f.attempt < 0:
		return q, usagef("--attempt %d is not an attempt number", f.attempt)
	case f.tail < 0:
		return q, usagef("--tail %d is not a number of lines", f.tail)
	case len(args) == 2 && f.node != "" && args[1] != f.node:
		return q, usagef("kiln logs names task %q and --node %q: name one task", args[1], f.node)
	}
	q.Task = f.node
	if len(args) == 2 {
		q.Task = args[1]
	}
	if f.since != "" {
		t, err := apiv1.ParseTimeAgo("since", f.since, now)
		if err != nil {
			return q, asFlag(err, "--since")
		}
		q.Since = &t
	}
	return q, nil
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
