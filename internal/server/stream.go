package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/store"
)

// events lists a run's events after ?after=; asked for text/event-stream
// (or ?follow=true) it streams them as Server-Sent Events until the run
// ends. A stream only reads the store: a slow client holds up no one.
func (s *Server) events(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	after, err := intParam(r, "after", 0)
	if err != nil {
		return err
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") && r.URL.Query().Get("follow") != "true" {
		list, err := s.cfg.Store.ListEvents(r.Context(), store.ListEventsParams{Run: run.ID, After: int64(after)})
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{"items": nonNil(list)})
		return nil
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	seq := int64(after)
	return s.follow(r, run.ID, func() (bool, error) {
		list, err := s.cfg.Store.ListEvents(r.Context(), store.ListEventsParams{Run: run.ID, After: seq, Limit: 500})
		for _, ev := range list {
			b, _ := json.Marshal(ev)
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Reason, b); err != nil {
				return false, err
			}
			seq = ev.Seq
		}
		flush(w)
		return len(list) > 0, err
	})
}

func nonNil(list []apiv1.Event) []apiv1.Event {
	if list == nil {
		return []apiv1.Event{}
	}
	return list
}

// follow calls step until the run has ended and step found nothing new,
// or the client left. The response has begun, so a failure can only end
// the stream; it is logged.
func (s *Server) follow(r *http.Request, id apiv1.RunID, step func() (bool, error)) error {
	if err := s.stream(r, id, step); err != nil && r.Context().Err() == nil {
		s.cfg.Log.Warn("stream ended early", "run", id, "err", err)
	}
	return nil
}

func (s *Server) stream(r *http.Request, id apiv1.RunID, step func() (bool, error)) error {
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
		select {
		case <-r.Context().Done():
			return nil
		case <-time.After(s.cfg.Poll):
		}
	}
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// logs returns what an attempt of a task wrote (?attempt=, default the
// latest), stdout then stderr of each process; ?follow=true keeps
// streaming until the run ends. Paths come from the run's own records,
// never from the request, so no request reaches outside the run.
func (s *Server) logs(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	task := r.PathValue("task")
	i := slices.IndexFunc(run.Status.Nodes, func(n apiv1.NodeStatus) bool { return n.Name == task })
	if i < 0 {
		return &httpError{http.StatusNotFound, apiv1.Errorf(apiv1.CodeRunNotFound, fmt.Sprintf("run %s has no task %q", run.ID, task))}
	}
	attempts := run.Status.Nodes[i].Attempts
	number, err := intParam(r, "attempt", len(attempts))
	if err != nil {
		return err
	}
	if number < 1 || number > len(attempts) {
		return &httpError{http.StatusNotFound, apiv1.Errorf(apiv1.CodeRunNotFound, fmt.Sprintf("task %s has no attempt %d", task, number))}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if s.cfg.Logs != nil {
		if handled, err := s.cfg.Logs(r.Context(), run.ID, task, number, r.URL.Query().Get("follow") == "true", &flushWriter{w}); handled {
			return err
		}
	}
	offsets := map[string]int64{}
	copyNew := func() (bool, error) {
		more := false
		for _, path := range app.LogFiles(s.cfg.AttemptDir(run.ID, task, number)) {
			n, err := copyFrom(w, path, offsets[path])
			offsets[path] += n
			more = more || n > 0
			if err != nil {
				return more, err
			}
		}
		flush(w)
		return more, nil
	}
	if r.URL.Query().Get("follow") != "true" {
		_, err := copyNew()
		return err
	}
	return s.follow(r, run.ID, copyNew)
}

// flushWriter sends every write to the client at once.
type flushWriter struct{ w http.ResponseWriter }

func (f *flushWriter) Write(b []byte) (int, error) {
	n, err := f.w.Write(b)
	flush(f.w)
	return n, err
}

func copyFrom(w io.Writer, path string, offset int64) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil // not written yet
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, err
	}
	return io.Copy(w, f)
}

func intParam(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, badRequest("%s %q is not a whole number", name, v)
	}
	return n, nil
}
