package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// events lists a run's events after ?after= (or the Last-Event-ID
// header, a reconnecting EventSource's); asked for text/event-stream (or
// ?follow=true) it streams them as Server-Sent Events, each with its seq
// as its ID, until the run ends, with heartbeats while it is quiet. A
// stream only reads the store: a slow client holds up no one.
func (s *Server) events(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	after, err := afterParam(r)
	if err != nil {
		return err
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") && r.URL.Query().Get("follow") != "true" {
		return s.listEvents(w, r, run.ID, after)
	}
	ev := s.newEventStream(w)
	seq := after
	return s.follow(r, run.ID, ev, func() (bool, error) {
		list, err := s.cfg.Store.ListEvents(r.Context(), store.ListEventsParams{Run: run.ID, After: seq, Limit: 500})
		var buf bytes.Buffer
		for _, ev := range list {
			b, _ := json.Marshal(ev)
			fmt.Fprintf(&buf, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Reason, b)
			seq = ev.Seq
		}
		if err := ev.send(buf.Bytes()); err != nil {
			return false, err
		}
		return len(list) > 0, err
	})
}

func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

// follow calls step until the run has ended and step found nothing new,
// or the client left. The response has begun, so a failure can only end
// the stream; it is logged.
func (s *Server) follow(r *http.Request, id apiv1.RunID, ev *eventStream, step func() (bool, error)) error {
	if err := s.stream(r, id, ev, step); err != nil && r.Context().Err() == nil {
		s.cfg.Log.Warn("stream ended early", "run", id, "err", err)
	}
	return nil
}

func (s *Server) stream(r *http.Request, id apiv1.RunID, ev *eventStream, step func() (bool, error)) error {
	for {
		run, err := s.cfg.Store.GetRun(r.Context(), id)
		if err != nil {
			return err
		}
		more, err := step()
		if err != nil {
			return err
		}
		if run.Status.Phase.Done() && !more {
			return nil
		}
		if err := ev.ping(); err != nil {
			return err
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-time.After(s.cfg.Poll):
		}
	}
}

// logs returns what a task's processes wrote: ?attempt= (default the
// latest), and with ?follow=true until it ends (for the latest: until
// the task does); ?tail=, ?since= and ?timestamps=true as
// apiv1.LogQuery says. The engine finds the attempt in the run's own
// records, never from the request, so no request reaches outside the run.
func (s *Server) logs(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	q, err := logQuery(r)
	if err != nil {
		return err
	}
	q.Run = run.ID
	sw := s.newStream(w, "text/plain; charset=utf-8")
	err = s.cfg.Engine.Logs(r.Context(), q, sw)
	if err != nil && !sw.wrote {
		return err
	}
	if err != nil {
		s.cfg.Log.Warn("log stream ended early", "run", run.ID, "task", q.Task, "err", err)
	}
	if !sw.wrote {
		_, _ = sw.Write(nil)
	}
	return nil
}

// streamWriter is a response that may outlast the server's timeouts, for
// as long as it has something to say. It lifts the read deadline (its
// request has no body, and an expired one would cancel it) and renews the
// write deadline before each write, so a client that stops reading is
// still cut off. Each write is sent at once.
type streamWriter struct {
	w           http.ResponseWriter
	rc          *http.ResponseController
	contentType string
	timeout     time.Duration
	wrote       bool
}

// newStream starts a stream of contentType on w.
func (s *Server) newStream(w http.ResponseWriter, contentType string) *streamWriter {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{}) // not supported by a recorder: nothing to lift
	return &streamWriter{w: w, rc: rc, contentType: contentType, timeout: s.cfg.Limits.WriteTimeout}
}

// Write sends b; a first Write sends the headers, even with no b.
func (f *streamWriter) Write(b []byte) (int, error) {
	if !f.wrote {
		f.w.Header().Set("Content-Type", f.contentType)
		f.wrote = true
	}
	if f.timeout > 0 {
		_ = f.rc.SetWriteDeadline(time.Now().Add(f.timeout))
	}
	n, err := f.w.Write(b)
	if err != nil {
		return n, err
	}
	if err := f.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return n, err
	}
	return n, nil
}

// logQuery reads a logs request's parameters.
func logQuery(r *http.Request) (apiv1.LogQuery, error) {
	v := r.URL.Query()
	q := apiv1.LogQuery{Task: r.PathValue("task"), Follow: v.Get("follow") == "true", Timestamps: v.Get("timestamps") == "true"}
	var err error
	if q.Attempt, err = intParam(r, "attempt", 0); err != nil {
		return q, err
	}
	if q.Tail, err = intParam(r, "tail", 0); err != nil {
		return q, err
	}
	if since := v.Get("since"); since != "" { // as the runs list reads it, with its code
		t, err := apiv1.ParseTimeAgo("since", since, time.Now())
		if err != nil {
			return q, &httpError{status: http.StatusBadRequest, err: apiv1.Errors(err)[0]}
		}
		q.Since = &t
	}
	return q, nil
}

func intParam(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, badParam(name, "give a whole number, 0 or more", "%s %q is not a whole number", name, v)
	}
	return n, nil
}
