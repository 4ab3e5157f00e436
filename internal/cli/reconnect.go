package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// exitServerLost is the exit code of a command that watched runs through
// a server and lost the server for longer than serverPatience: the runs
// may well still be going.
const exitServerLost = 3

// serverPatience is how long a watcher waits for a server it lost (one
// that restarts, say) before it gives up.
const serverPatience = 2 * time.Minute

// patientReader reads runs from a server and rides out the server's
// restarts: a request that cannot reach the server is tried again, less
// and less often, for up to patience; the runs go on meanwhile, and a
// restarted server adopts them. It says once per outage that the
// connection is lost, and once that it is back.
type patientReader struct {
	reader
	e        *env
	ids      []apiv1.RunID
	patience time.Duration
	lost     time.Time // when the server went; zero while it answers
	gone     bool      // patience ran out: every read fails at once
}

// patient wraps r, the server's reader, for a watcher of runs ids.
func patient(e *env, r reader, ids []apiv1.RunID) *patientReader {
	return &patientReader{reader: r, e: e, ids: ids, patience: serverPatience}
}

// retry calls f until it reaches the server, ctx ends or patience runs
// out; the last is an exitError of exitServerLost, its message printed.
func retry[T any](ctx context.Context, p *patientReader, f func() (T, error)) (T, error) {
	wait := 250 * time.Millisecond
	for {
		if p.gone {
			var zero T
			return zero, &exitError{exitServerLost}
		}
		v, err := f()
		if apiv1.CodeOf(err) != apiv1.CodeServerUnreachable {
			if err == nil && !p.lost.IsZero() {
				fmt.Fprintf(p.e.stderr, "the server at %s answers again\n", p.e.server)
				p.lost = time.Time{}
			}
			return v, err
		}
		if p.lost.IsZero() {
			p.lost = time.Now()
			fmt.Fprintf(p.e.stderr, "lost the connection to the server at %s; retrying (the run goes on; kiln watch RUN re-attaches)\n", p.e.server)
		}
		if time.Since(p.lost) >= p.patience {
			p.gone = true
			printError(p.e.stderr, p.gaveUp())
			return v, &exitError{exitServerLost}
		}
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// gaveUp is the error of a server that never came back.
func (p *patientReader) gaveUp() error {
	runs := make([]string, len(p.ids))
	for i, id := range p.ids {
		runs[i] = string(id)
	}
	return &apiv1.Error{
		Code: apiv1.CodeServerUnreachable,
		Message: fmt.Sprintf("the server at %s did not answer for %s while watching %s; the runs may still be going there",
			p.e.server, p.patience, strings.Join(runs, " ")),
		Hint: fmt.Sprintf("once the server is back, kiln watch %s re-attaches (kiln get runs shows where they are)", strings.Join(runs, " ")),
	}
}

// GetRun implements reader.
func (p *patientReader) GetRun(ctx context.Context, id apiv1.RunID) (*apiv1.Run, error) {
	return retry(ctx, p, func() (*apiv1.Run, error) { return p.reader.GetRun(ctx, id) })
}

// GetRunHead implements reader.
func (p *patientReader) GetRunHead(ctx context.Context, id apiv1.RunID) (*apiv1.Run, error) {
	return retry(ctx, p, func() (*apiv1.Run, error) { return p.reader.GetRunHead(ctx, id) })
}

// RunNodes implements reader.
func (p *patientReader) RunNodes(ctx context.Context, id apiv1.RunID, q apiv1.NodeQuery) (*apiv1.NodeList, error) {
	return retry(ctx, p, func() (*apiv1.NodeList, error) { return p.reader.RunNodes(ctx, id, q) })
}

// Events implements reader.
func (p *patientReader) Events(ctx context.Context, id apiv1.RunID, after int64) ([]apiv1.Event, error) {
	return retry(ctx, p, func() ([]apiv1.Event, error) { return p.reader.Events(ctx, id, after) })
}
