package kube

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"kiln.dev/kiln/internal/backend"
)

// merged writes the logs of a gang's containers, each asked with the pod
// log API's timestamps, in the order their lines were written.
func (b *Backend) merged(ctx context.Context, streams []logStream, opts backend.LogOptions, out *lineWriter) error {
	var sources []timedSource
	for _, s := range streams {
		o := podLogOptions(s, opts, false)
		o.Timestamps = true
		rc, err := b.core.logs(ctx, s.pod, o)
		if err != nil {
			return fmt.Errorf("reading the log of pod %s, container %s: %w", s.pod, s.container, err)
		}
		defer rc.Close()
		sources = append(sources, timedSource{r: rc, label: s.container})
	}
	return mergeByTime(sources, opts.Timestamps, out)
}

// timedSource is a container's log whose lines start with their time in
// RFC 3339, and the label its lines are written with.
type timedSource struct {
	r     io.Reader
	label string
}

// mergeByTime writes the lines of sources, each labelled, in time order,
// those of the same time in the order of sources; it reads one line of
// each at a time. Without timestamps, the lines are written without
// their times. A line whose time does not parse takes that of the line
// before it in its source.
func mergeByTime(sources []timedSource, timestamps bool, out *lineWriter) error {
	type head struct {
		sc   *bufio.Scanner
		line string
		at   time.Time
		ok   bool
	}
	heads := make([]head, len(sources))
	advance := func(h *head) {
		if h.ok = h.sc.Scan(); h.ok {
			h.line = h.sc.Text()
			ts, _, _ := strings.Cut(h.line, " ")
			if at, err := time.Parse(time.RFC3339Nano, ts); err == nil {
				h.at = at
			}
		}
	}
	for i, s := range sources {
		heads[i].sc = bufio.NewScanner(s.r)
		heads[i].sc.Buffer(make([]byte, 64<<10), 1<<20)
		advance(&heads[i])
	}
	for {
		first := -1
		for i := range heads {
			if heads[i].ok && (first < 0 || heads[i].at.Before(heads[first].at)) {
				first = i
			}
		}
		if first < 0 {
			break
		}
		h := &heads[first]
		line := labelled(h.line, sources[first].label, true, true)
		if !timestamps {
			_, line, _ = strings.Cut(line, " ")
		}
		out.line(line)
		advance(h)
	}
	for i := range heads {
		if err := heads[i].sc.Err(); err != nil {
			return fmt.Errorf("reading the log of container %s: %w", sources[i].label, err)
		}
	}
	return nil
}
