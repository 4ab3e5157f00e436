package cli

import (
	"context"
	"io"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// watchInterval is how often kiln get runs -w reads the list again.
const watchInterval = time.Second

// watchRunList prints the table of first, then, as kubectl get -w does, a
// row for each run that appears or changes (phase, progress, message),
// reading the list with again each second, until ctx ends.
func watchRunList(ctx context.Context, w io.Writer, f runListFlags, first []*apiv1.Run, again func(context.Context) ([]*apiv1.Run, error)) error {
	wide := f.output == "wide"
	t := runTable(wide)
	seen := map[apiv1.RunID]string{}
	for _, r := range first {
		t.add(runRow(r, wide))
		seen[r.ID] = runState(r)
	}
	if err := t.write(w); err != nil {
		return err
	}
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		list, err := again(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if err := printChanged(w, t, seen, list, wide); err != nil {
			return err
		}
	}
}

// printChanged prints a row for each run of list whose state differs
// from what seen holds, oldest first, and remembers it.
func printChanged(w io.Writer, t *grid, seen map[apiv1.RunID]string, list []*apiv1.Run, wide bool) error {
	var b strings.Builder
	for i := len(list) - 1; i >= 0; i-- {
		r := list[i]
		if s := runState(r); seen[r.ID] != s {
			seen[r.ID] = s
			b.WriteString(t.line(runRow(r, wide)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// runState is what a watch prints a run again for: its phase, progress
// and message, not its age.
func runState(r *apiv1.Run) string {
	return string(r.Status.Phase) + "\x00" + progressCell(r.Status.Progress) + "\x00" + taskCounts(r.Status.Progress) + "\x00" + r.Status.Message
}
