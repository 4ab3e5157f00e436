package kube

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// Logs streams the attempt's container logs from the pod log API. A
// gang's containers are merged by the times the API gives their lines,
// or, when following, written as their lines arrive. Lines of a gang
// carry their process's name, as the local backend's do; the API's
// timestamps go before it. Tail and Since are the API's TailLines and
// SinceTime, per container: a container's log holds its stdout and
// stderr together, so Tail is per process, as the local backend's.
func (b *Backend) Logs(ctx context.Context, id job.AttemptID, opts backend.LogOptions, w io.Writer) error {
	follow := opts.Follow
	a := names(id)
	pods := b.podsOf(a)
	if len(pods) == 0 {
		return &apiv1.Error{Code: apiv1.CodeBackend, Message: fmt.Sprintf(
			"attempt %s has no pods in namespace %s: they were cleaned up (see --clean-policy) or never created", id, b.ns)}
	}
	var streams []logStream
	for _, h := range sortedHosts(pods) {
		p := pods[h]
		for _, c := range p.Spec.Containers {
			if isProcess(p, c.Name) {
				streams = append(streams, logStream{pod: p.Name, container: c.Name, ended: terminal(p)})
			}
		}
	}
	if len(streams) == 0 {
		return nil
	}
	prefix := len(streams) > 1 || streams[0].container != apiv1.MainContainer
	out := &lineWriter{w: w}
	if !follow && len(streams) > 1 {
		return b.merged(ctx, streams, opts, out)
	}
	if !follow {
		for _, s := range streams {
			if err := b.stream(ctx, s, podLogOptions(s, opts, false), out, prefix); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go b.stopWhenEnded(ctx, a, stop)
	var wg sync.WaitGroup
	errs := make([]error, len(streams))
	for i, s := range streams {
		wg.Go(func() { errs[i] = b.stream(ctx, s, podLogOptions(s, opts, !s.ended), out, prefix) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// stopWhenEnded calls stop once the attempt has ended (it is decided, or
// all its pods have), so that following its logs ends with it even where
// the log stream of an ended container stays open.
func (b *Backend) stopWhenEnded(ctx context.Context, a attempt, stop func()) {
	tick := time.NewTicker(logPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, decided := b.record(a); decided || allEnded(b.podsOf(a)) {
			// Let the streams write what the containers wrote last.
			select {
			case <-ctx.Done():
			case <-time.After(logPoll):
			}
			stop()
			return
		}
	}
}

// logPoll is how often a followed log checks whether its attempt ended.
const logPoll = 500 * time.Millisecond

// logStream is one container's log; an ended one is read, not followed.
type logStream struct {
	pod, container string
	ended          bool
}

// isProcess reports whether container c of pod p runs a process of the
// attempt rather than a sidecar from the pod template: kiln's containers
// have KILN_OUTPUTS set.
func isProcess(p *corev1.Pod, name string) bool {
	for _, c := range p.Spec.Containers {
		if c.Name != name {
			continue
		}
		for _, e := range c.Env {
			if e.Name == "KILN_OUTPUTS" {
				return true
			}
		}
	}
	return false
}

// podLogOptions asks the pod log API for stream s's lines as opts say.
func podLogOptions(s logStream, opts backend.LogOptions, follow bool) *corev1.PodLogOptions {
	o := &corev1.PodLogOptions{Container: s.container, Follow: follow, Timestamps: opts.Timestamps}
	if opts.Tail > 0 {
		o.TailLines = ptr.To(int64(opts.Tail))
	}
	if !opts.Since.IsZero() {
		o.SinceTime = &metav1.Time{Time: opts.Since}
	}
	return o
}

func (b *Backend) stream(ctx context.Context, s logStream, opts *corev1.PodLogOptions, out *lineWriter, prefix bool) error {
	rc, err := b.core.logs(ctx, s.pod, opts)
	if err != nil {
		return fmt.Errorf("reading the log of pod %s, container %s: %w", s.pod, s.container, err)
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		out.line(labelled(sc.Text(), s.container, prefix, opts.Timestamps))
	}
	if ctx.Err() != nil {
		return nil
	}
	return sc.Err()
}

// labelled is a log line with its process's name, if prefix, after the
// time the API starts it with, if timestamps.
func labelled(line, container string, prefix, timestamps bool) string {
	if !prefix {
		return line
	}
	if ts, rest, ok := strings.Cut(line, " "); timestamps && ok {
		return ts + " " + container + " | " + rest
	}
	return container + " | " + line
}

// lineWriter writes whole lines from several goroutines.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) line(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, s+"\n")
}

func sortedHosts(pods map[int]*corev1.Pod) []int {
	hs := make([]int, 0, len(pods))
	for h := range pods {
		hs = append(hs, h)
	}
	sort.Ints(hs)
	return hs
}
