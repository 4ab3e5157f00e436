package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// sseEvent is one event of a Server-Sent Events stream, or a comment.
type sseEvent struct {
	id, event, data, comment string
}

// openSSE opens an event stream at path with token and, if lastID is not
// empty, a Last-Event-ID; its events arrive on the channel, closed when
// the stream ends. The stream is closed when the test ends.
func (e *env) openSSE(t *testing.T, path, token, lastID string) (<-chan sseEvent, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan sseEvent, 1000)
	if resp.StatusCode != http.StatusOK {
		close(out)
		return out, resp
	}
	go func() {
		defer close(out)
		defer resp.Body.Close()
		var ev sseEvent
		for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
			line := sc.Text()
			field, value, _ := strings.Cut(line, ": ")
			switch field {
			case "":
				if line == "" && ev != (sseEvent{}) {
					out <- ev
					ev = sseEvent{}
				} else if strings.HasPrefix(line, ":") {
					out <- sseEvent{comment: strings.TrimPrefix(line, ": ")}
				}
			case "id":
				ev.id = value
			case "event":
				ev.event = value
			case "data":
				ev.data = value
			}
		}
	}()
	return out, resp
}

// next returns the next event (not comment) for which keep is true,
// failing the test after 20 seconds.
func next(t *testing.T, events <-chan sseEvent, keep func(sseEvent) bool) sseEvent {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the stream ended")
			}
			if ev.comment == "" && keep(ev) {
				return ev
			}
		case <-deadline:
			t.Fatal("no such event came")
		}
	}
}

func runOf(t *testing.T, ev sseEvent) apiv1.Run {
	t.Helper()
	var run apiv1.Run
	if err := json.Unmarshal([]byte(ev.data), &run); err != nil || run.ID == "" {
		t.Fatalf("event %s holds no run: %q (%v)", ev.event, ev.data, err)
	}
	return run
}

// TestRunEventsBeatAndResume follows a run's events: the stream sends a
// heartbeat while the run is quiet, each event's ID is its seq, and a
// stream opened with Last-Event-ID goes on after that event.
func TestRunEventsBeatAndResume(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(c *Config) { c.Limits.Heartbeat = 200 * time.Millisecond })
	slow := "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: quiet}\n" +
		"spec: {tasks: [{name: t, command: [sh, -c, 'sleep 1.5']}]}\n"
	resp, b := e.do(t, "POST", "/api/v1/runs", e.admin, slow)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("submit: %d %s", resp.StatusCode, b)
	}
	id := runID(t, b)
	events, _ := e.openSSE(t, "/api/v1/runs/"+string(id)+"/events", e.viewer, "")
	var seqs []int64
	pings := 0
	for ev := range events {
		if ev.comment == "ping" {
			pings++
			continue
		}
		var got apiv1.Event
		if err := json.Unmarshal([]byte(ev.data), &got); err != nil || strconv.FormatInt(got.Seq, 10) != ev.id {
			t.Errorf("event %+v: id is not its seq (%v)", ev, err)
		}
		seqs = append(seqs, got.Seq)
	}
	if pings < 3 {
		t.Errorf("a run quiet for 1.5s sent %d heartbeats every 200ms, want at least 3", pings)
	}
	if len(seqs) < 3 {
		t.Fatalf("the stream carried %d events: %v", len(seqs), seqs)
	}
	resumed, _ := e.openSSE(t, "/api/v1/runs/"+string(id)+"/events?after=0", e.viewer, strconv.FormatInt(seqs[1], 10))
	var after []int64
	for ev := range resumed {
		if ev.comment == "" {
			n, _ := strconv.ParseInt(ev.id, 10, 64)
			after = append(after, n)
		}
	}
	if len(after) != len(seqs)-2 || after[0] != seqs[2] {
		t.Errorf("resumed after event %d, the stream sent %v; want %v", seqs[1], after, seqs[2:])
	}
}

// TestWatchRunsStreamsChanges watches the runs list: a run submitted
// later arrives and its changes follow until it succeeds; a filtered
// watch carries only the runs its filter keeps; a watch resumed with an
// event's ID skips the runs that ended before it; a bad filter is
// refused as the list refuses it.
func TestWatchRunsStreamsChanges(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(c *Config) { c.Limits.Heartbeat = 200 * time.Millisecond })
	first := e.submit(t, e.admin, "")
	e.waitDone(t, first.ID)

	all, resp := e.openSSE(t, "/api/v1/runs?watch=true", e.viewer, "")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("watch answered %d, %s", resp.StatusCode, ct)
	}
	succeeded, _ := e.openSSE(t, "/api/v1/runs?watch=true&phase=Succeeded", e.viewer, "")
	ev := next(t, all, func(sseEvent) bool { return true })
	if ev.event != "run" || runOf(t, ev).ID != first.ID || !strings.HasPrefix(ev.id, "t") {
		t.Fatalf("the watch began with %+v, want the run already there", ev)
	}
	lastID := ev.id

	second := e.submit(t, e.admin, "")
	var phases []apiv1.Phase
	for {
		run := runOf(t, next(t, all, func(ev sseEvent) bool { return ev.event == "run" }))
		if run.ID != second.ID {
			continue
		}
		phases = append(phases, run.Status.Phase)
		if run.Status.Phase.Done() {
			break
		}
	}
	if phases[len(phases)-1] != apiv1.PhaseSucceeded {
		t.Errorf("the watch saw run %s go through %v, want it to end Succeeded", second.ID, phases)
	}
	for _, id := range []apiv1.RunID{first.ID, second.ID} {
		ev := next(t, succeeded, func(sseEvent) bool { return true })
		if run := runOf(t, ev); run.Status.Phase != apiv1.PhaseSucceeded {
			t.Errorf("the watch of Succeeded runs sent run %s in phase %s (waiting for %s)", run.ID, run.Status.Phase, id)
		}
	}

	resumed, _ := e.openSSE(t, "/api/v1/runs?watch=true", e.viewer, lastID)
	if got := runOf(t, next(t, resumed, func(ev sseEvent) bool { return ev.event == "run" })); got.ID != second.ID {
		t.Errorf("resumed after the first run's event, the watch sent run %s first, want %s, created since", got.ID, second.ID)
	}
	later, _ := e.openSSE(t, "/api/v1/runs?watch=true", e.viewer, watchID(time.Now().Add(time.Hour)))
	for deadline := time.After(time.Second); ; {
		select {
		case ev := <-later:
			if ev.comment == "" {
				t.Fatalf("resumed after both runs ended, the watch sent %+v", ev)
			}
			continue
		case <-deadline:
		}
		break
	}

	resp, b := e.do(t, "GET", "/api/v1/runs?watch=true&limit=0", e.viewer, "")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "limit") {
		t.Errorf("a watch with a bad limit: %d %s, want 400 naming it", resp.StatusCode, b)
	}
}

// TestWatchSaysWhenARunIsDeleted deletes a watched run: the watch says so.
func TestWatchSaysWhenARunIsDeleted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := e.submit(t, e.admin, "")
	e.waitDone(t, run.ID)
	events, _ := e.openSSE(t, "/api/v1/runs?watch=true", e.viewer, "")
	next(t, events, func(ev sseEvent) bool { return ev.event == "run" })
	if resp, b := e.do(t, "DELETE", "/api/v1/runs/"+string(run.ID), e.admin, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("delete: %d %s", resp.StatusCode, b)
	}
	ev := next(t, events, func(ev sseEvent) bool { return ev.event == "deleted" })
	if ev.data != `{"id":"`+string(run.ID)+`"}` {
		t.Errorf("deleted event data = %s", ev.data)
	}
}

// TestWatchSaysWhenARunLeavesItsFilter watches the Running runs: a run
// comes in when it starts and is sent once more, Succeeded, when it ends
// and leaves the filter. A watch of one run's page says nothing of the
// run a newer one pushes out.
func TestWatchSaysWhenARunLeavesItsFilter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	running, _ := e.openSSE(t, "/api/v1/runs?watch=true&phase=Running", e.viewer, "")
	one, _ := e.openSSE(t, "/api/v1/runs?watch=true&limit=1", e.viewer, "")
	slow := "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: slow}\n" +
		"spec: {tasks: [{name: t, command: [sh, -c, 'sleep 1']}]}\n"
	resp, b := e.do(t, "POST", "/api/v1/runs", e.admin, slow)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("submit: %d %s", resp.StatusCode, b)
	}
	id := runID(t, b)
	if run := runOf(t, next(t, running, func(sseEvent) bool { return true })); run.ID != id || run.Status.Phase != apiv1.PhaseRunning {
		t.Fatalf("the watch of Running runs sent %s in phase %s first", run.ID, run.Status.Phase)
	}
	if run := runOf(t, next(t, running, func(sseEvent) bool { return true })); run.ID != id || run.Status.Phase != apiv1.PhaseSucceeded {
		t.Errorf("when the run ended, the watch of Running runs sent %s in phase %s; want it Succeeded", run.ID, run.Status.Phase)
	}
	e.waitDone(t, id)
	next(t, one, func(ev sseEvent) bool { return ev.event == "run" && runOf(t, ev).Status.Phase == apiv1.PhaseSucceeded })
	e.submit(t, e.admin, "")
	for {
		ev := next(t, one, func(sseEvent) bool { return true })
		run := runOf(t, ev)
		if run.ID == id {
			t.Fatalf("the run pushed out of the page was sent again: %s", ev.data)
		}
		if run.Status.Phase.Done() {
			break
		}
	}
}
