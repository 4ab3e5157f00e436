package server

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"runtime/debug"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// coded serves r with h, a handler kiln does not write itself (the web
// UI's file server, the metrics handler), and answers an error it writes
// as text (http.Error, a file server's 404 or 416) as every route does:
// JSON with a code, its status kept.
func coded(w http.ResponseWriter, r *http.Request, h http.Handler) {
	cw := &codedWriter{ResponseWriter: w, path: r.URL.Path}
	h.ServeHTTP(cw, r)
	cw.finish()
}

// codedWriter passes an answer through unless its status is an error
// and its body is not JSON; that body it keeps, to write it as the
// message of a coded error once the handler is done.
type codedWriter struct {
	http.ResponseWriter
	path    string
	status  int          // the error status held back; 0 while none is
	wrote   bool         // the status was written (or held back)
	message bytes.Buffer // the text of the held-back error, bounded
}

// maxMessage bounds the text of a held-back error kept as its message.
const maxMessage = 512

func (w *codedWriter) WriteHeader(status int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if status < http.StatusBadRequest || isJSON(w.Header().Get("Content-Type")) {
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.status = status
}

func (w *codedWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.status == 0 {
		return w.ResponseWriter.Write(b)
	}
	if room := maxMessage - w.message.Len(); room > 0 {
		w.message.Write(b[:min(len(b), room)])
	}
	return len(b), nil
}

// finish writes the held-back error, if any, as JSON.
func (w *codedWriter) finish() {
	if w.status == 0 {
		return
	}
	h := w.Header()
	for _, k := range []string{"Content-Length", "Content-Encoding", "Content-Range", "X-Content-Type-Options"} {
		h.Del(k)
	}
	message := strings.TrimSpace(w.message.String())
	if message == "" {
		message = strings.ToLower(http.StatusText(w.status))
	}
	writeJSON(w.ResponseWriter, w.status, apiv1.ErrorList{Errors: withHints([]*apiv1.Error{
		apiv1.Errorf(refusalCode(w.status), fmt.Sprintf("%s: %s", w.path, message)),
	})})
}

// Unwrap returns the response it wraps, for http.ResponseController.
func (w *codedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// refusalCode is the code of an error status a handler not kiln's wrote.
func refusalCode(status int) apiv1.Code {
	switch {
	case status == http.StatusNotFound:
		return apiv1.CodeNoUIFile
	case status == http.StatusRequestedRangeNotSatisfiable, status == http.StatusPreconditionFailed:
		return apiv1.CodeUnsatisfied
	case status >= http.StatusInternalServerError:
		return apiv1.CodeInternal
	}
	return apiv1.CodeHTTPRefusal
}

func isJSON(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/json"
}

// recovered answers a request whose handler panicked as one that failed
// (500, KLN-4009), logging the panic and its stack; net/http would close
// the connection without an answer. An answer already begun cannot be
// taken back: its connection is cut, as net/http does.
func (s *Server) recovered(w http.ResponseWriter, r *http.Request) {
	p := recover()
	if p == nil {
		return
	}
	if p == http.ErrAbortHandler { //nolint:errorlint // net/http compares it so
		panic(p)
	}
	s.cfg.Log.Error("request panicked", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	if sw, ok := w.(*statusWriter); ok && sw.code != 0 {
		panic(http.ErrAbortHandler)
	}
	writeJSON(w, http.StatusInternalServerError, apiv1.ErrorList{Errors: withHints([]*apiv1.Error{apiv1.Errorf(apiv1.CodeInternal, "internal error")})})
}
