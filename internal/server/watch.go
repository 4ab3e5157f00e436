package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// runsOrWatch lists runs, or, with ?watch=true, watches them.
func (s *Server) runsOrWatch(w http.ResponseWriter, r *http.Request, p *principal) error {
	if r.URL.Query().Get("watch") == "true" {
		return s.watchRuns(w, r, p)
	}
	return s.listRuns(w, r, p)
}

// watchSlack is how far before a resumed stream's last event a run that
// ended is sent again: its end may have been written a little after the
// time it records.
const watchSlack = 10 * time.Second

// watchRuns streams, as Server-Sent Events, the runs of the list's first
// page (the same filters as listing them) as they are created or change:
// each is "event: run" with the run's JSON, as the list has it. A run
// that leaves the page because its phase changed (it left a phase
// filter) is sent once more as it is then; deleted, as "event: deleted"
// with {"id"}; pushed out by newer runs, it is not sent. Each
// event's ID marks when the server looked; a client that reconnects with
// it (Last-Event-ID) gets the runs that may have changed since: those
// not ended, and those created or ended since.
func (s *Server) watchRuns(w http.ResponseWriter, r *http.Request, p *principal) error {
	since, resumed := watchResume(lastEventID(r, "after"))
	r = pageRequest(r)
	now := time.Now()
	page, err := s.runsPage(r, p)
	if err != nil {
		return err // a bad filter: answered as the list answers it
	}
	ev := s.newEventStream(w)
	wt := &watcher{s: s, r: r, p: p, sent: map[apiv1.RunID]sentRun{}}
	if resumed {
		wt.skipUnchangedSince(page, since.Add(-watchSlack))
	}
	if err := wt.run(ev, page, now); err != nil && r.Context().Err() == nil {
		s.cfg.Log.Warn("watch of runs ended early", "err", err)
	}
	return nil // the response has begun: a failure can only end it
}

// run sends the changes of page, seen at now, and of each page after,
// until the client leaves.
func (wt *watcher) run(ev *eventStream, page []listedRun, now time.Time) error {
	for {
		if err := ev.send(wt.changes(page, now)); err != nil {
			return err
		}
		if err := ev.ping(); err != nil {
			return err
		}
		select {
		case <-wt.r.Context().Done():
			return nil
		case <-time.After(wt.s.cfg.Poll):
		}
		now = time.Now()
		var err error
		if page, err = wt.s.runsPage(wt.r, wt.p); err != nil {
			return err
		}
	}
}

// pageRequest is r asking for the list's first page, as a watch follows it.
func pageRequest(r *http.Request) *http.Request {
	q := r.URL.Query()
	q.Del("watch")
	q.Del("cursor")
	q.Del("after")
	r2 := r.Clone(r.Context())
	r2.URL.RawQuery = q.Encode()
	return r2
}

// watchResume reads a watch's event ID; false for none, or one this
// server did not give, which starts the watch afresh.
func watchResume(id string) (time.Time, bool) {
	v, ok := strings.CutPrefix(id, "t")
	n, err := strconv.ParseInt(v, 36, 64)
	if !ok || err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, n), true
}

// watchID is the event ID of what a watch saw at t.
func watchID(t time.Time) string { return "t" + strconv.FormatInt(t.UnixNano(), 36) }

// listedRun is what a watch reads of a listed run.
type listedRun struct {
	raw       json.RawMessage
	ID        apiv1.RunID `json:"id"`
	CreatedAt time.Time   `json:"createdAt"`
	Status    struct {
		Phase      apiv1.Phase `json:"phase"`
		FinishedAt *time.Time  `json:"finishedAt"`
	} `json:"status"`
}

// runsPage is the first page of runs r lists, as listRuns answers it: the
// same filters, checks and projects.
func (s *Server) runsPage(r *http.Request, p *principal) ([]listedRun, error) {
	rec := &pageRecorder{header: http.Header{}}
	if err := s.listRuns(rec, r, p); err != nil {
		return nil, err
	}
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(rec.body.Bytes(), &page); err != nil {
		return nil, fmt.Errorf("reading the list of runs: %w", err)
	}
	runs := make([]listedRun, len(page.Items))
	for i, raw := range page.Items {
		if err := json.Unmarshal(raw, &runs[i]); err != nil {
			return nil, fmt.Errorf("reading the list of runs: %w", err)
		}
		runs[i].raw = raw
	}
	return runs, nil
}

// pageRecorder keeps the page listRuns writes.
type pageRecorder struct {
	header http.Header
	body   bytes.Buffer
}

func (p *pageRecorder) Header() http.Header         { return p.header }
func (p *pageRecorder) Write(b []byte) (int, error) { return p.body.Write(b) }
func (p *pageRecorder) WriteHeader(int)             {}

// watcher is what a watch has sent of each run.
type watcher struct {
	s    *Server
	r    *http.Request
	p    *principal
	sent map[apiv1.RunID]sentRun
}

// sentRun is what a watch sent of a run: its JSON's hash and its phase.
type sentRun struct {
	hash  uint64
	phase apiv1.Phase
}

// skipUnchangedSince marks as sent the runs of page that cannot have
// changed since t: those that had ended by then.
func (wt *watcher) skipUnchangedSince(page []listedRun, t time.Time) {
	for _, run := range page {
		ended := run.Status.Phase.Done() && run.Status.FinishedAt != nil && run.Status.FinishedAt.Before(t)
		if ended && run.CreatedAt.Before(t) {
			wt.sent[run.ID] = sentRun{hashOf(run.raw), run.Status.Phase}
		}
	}
}

// changes frames the events for page, seen at t: the runs new or changed
// since last sent, and those that left it.
func (wt *watcher) changes(page []listedRun, t time.Time) []byte {
	var buf bytes.Buffer
	id := watchID(t)
	listed := make(map[apiv1.RunID]bool, len(page))
	for _, run := range page {
		listed[run.ID] = true
		if h := hashOf(run.raw); wt.sent[run.ID].hash != h {
			wt.sent[run.ID] = sentRun{h, run.Status.Phase}
			fmt.Fprintf(&buf, "id: %s\nevent: run\ndata: %s\n\n", id, run.raw)
		}
	}
	for rid, was := range wt.sent {
		if !listed[rid] {
			delete(wt.sent, rid)
			wt.left(&buf, id, rid, was.phase)
		}
	}
	return buf.Bytes()
}

// left frames the event of run rid, which left the page: as it is now if
// its phase changed from the one sent, or its deletion.
func (wt *watcher) left(buf *bytes.Buffer, id string, rid apiv1.RunID, phase apiv1.Phase) {
	run, err := wt.s.cfg.Store.GetRun(wt.r.Context(), rid)
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(buf, "id: %s\nevent: deleted\ndata: {\"id\":%q}\n\n", id, rid)
		return
	}
	if err != nil || !wt.p.may(run.Project) || run.Status.Phase == phase {
		return
	}
	if raw, err := json.Marshal(run); err == nil {
		fmt.Fprintf(buf, "id: %s\nevent: run\ndata: %s\n\n", id, raw)
	}
}

func hashOf(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}
