package server

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"hash/fnv"
	"net/http"
	"strings"
)

// gzipAbove is the smallest answer worth compressing.
const gzipAbove = 1024

// cached answers a GET that pages poll (a run, its nodes, its events, a
// list of runs) so that a poll costs little: the answer carries an ETag
// of its body, and a request whose If-None-Match holds it is answered 304
// with no body; a client that accepts gzip gets the body compressed. A
// stream (Server-Sent Events) is answered as it is, unbuffered.
func cached(h func(http.ResponseWriter, *http.Request, *principal) error) func(http.ResponseWriter, *http.Request, *principal) error {
	return func(w http.ResponseWriter, r *http.Request, p *principal) error {
		if streams(r) {
			return h(w, r, p)
		}
		buf := &bufferedResponse{header: w.Header()}
		if err := h(buf, r, p); err != nil {
			return err // answered as any error is, the buffer dropped
		}
		buf.send(w, r)
		return nil
	}
}

// streams reports whether r asks for a stream rather than one answer.
func streams(r *http.Request) bool {
	q := r.URL.Query()
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream") || q.Get("follow") == "true" || q.Get("watch") == "true"
}

// bufferedResponse keeps an answer to send once it is whole.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

// send writes the answer to w: 304 if the client has it already, else
// the body, gzipped if the client takes it and it is worth it.
func (b *bufferedResponse) send(w http.ResponseWriter, r *http.Request) {
	status := b.status
	if status == 0 {
		status = http.StatusOK
	}
	h := w.Header()
	h.Add("Vary", "Accept-Encoding")
	if status == http.StatusOK {
		tag := etagOf(b.body.Bytes())
		h.Set("ETag", tag)
		h.Set("Cache-Control", "no-cache") // keep it, but ask each time whether it changed
		if matches(r.Header.Get("If-None-Match"), tag) {
			h.Del("Content-Type")
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if b.body.Len() < gzipAbove || !acceptsGzip(r.Header.Get("Accept-Encoding")) {
		w.WriteHeader(status)
		_, _ = w.Write(b.body.Bytes())
		return
	}
	h.Set("Content-Encoding", "gzip")
	h.Del("Content-Length")
	w.WriteHeader(status)
	gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	_, _ = gz.Write(b.body.Bytes())
	_ = gz.Close()
}

// etagOf is the weak ETag of body: weak, as the same body is sent
// gzipped or not.
func etagOf(body []byte) string {
	h := fnv.New128a()
	_, _ = h.Write(body)
	return `W/"` + hex.EncodeToString(h.Sum(nil)) + `"`
}

// matches reports whether an If-None-Match header names tag, compared
// weakly (RFC 9110 13.1.2), or is "*".
func matches(header, tag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == strings.TrimPrefix(tag, "W/") {
			return true
		}
	}
	return false
}

// acceptsGzip reports whether an Accept-Encoding header takes gzip, with
// a weight above 0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") && strings.TrimSpace(coding) != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
