package server

import (
	"net/http"
	"strconv"
	"time"
)

// eventStream is a response of Server-Sent Events that says it is alive:
// silent for the server's Heartbeat, it sends a comment, ": ping".
type eventStream struct {
	sw   *streamWriter
	beat time.Duration
	last time.Time
}

// newEventStream starts an event stream on w and sends its headers at
// once; a client gone already ends the stream at its next write.
func (s *Server) newEventStream(w http.ResponseWriter) *eventStream {
	w.Header().Set("Cache-Control", "no-cache")
	sw := s.newStream(w, "text/event-stream")
	_, _ = sw.Write(nil)
	return &eventStream{sw: sw, beat: s.cfg.Limits.Heartbeat, last: time.Now()}
}

// send writes b, events already framed, if there is any.
func (e *eventStream) send(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	e.last = time.Now()
	_, err := e.sw.Write(b)
	return err
}

// ping sends the heartbeat if the stream has been silent for long enough.
func (e *eventStream) ping() error {
	if time.Since(e.last) < e.beat {
		return nil
	}
	return e.send([]byte(": ping\n\n"))
}

// lastEventID is the ID of the last event a reconnecting client had (the
// Last-Event-ID header an EventSource sends), or query parameter name.
func lastEventID(r *http.Request, name string) string {
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		return id
	}
	return r.URL.Query().Get(name)
}

// afterParam is the sequence number after which a run's events are sent:
// the Last-Event-ID header's, else ?after=.
func afterParam(r *http.Request) (int64, error) {
	v := lastEventID(r, "after")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, badRequest("after (or Last-Event-ID) %q is not an event's sequence number", v)
	}
	return n, nil
}
