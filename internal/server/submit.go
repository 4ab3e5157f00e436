package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// submit takes a Workflow or TrainJob (with TrainingRuntimes beside it):
// as multipart/form-data, one "file" part per file (its filename names
// it in errors) and fields "param" (name=value, repeatable), "project",
// "workdir" and "cache"; or as one YAML or JSON body, with ?file=,
// ?param=, ?project=, ?workdir= and ?cache=. The submitter's workdir is used only for a request from
// this machine.
//
// At most MaxSubmits submissions are read and checked at once: checking
// can take over a hundred times the body's size in memory.
//
// With an Idempotency-Key, a submission whose key created a run of the
// project within apiv1.IdempotencyWindow answers with that run (201,
// Idempotency-Replayed: true) and creates none. A submission is answered
// before the write timeout would cut the answer off: one not checked by
// a deadline short of it is answered KLN-4062 (503) and creates no run.
func (s *Server) submit(w http.ResponseWriter, r *http.Request, p *principal) error {
	deadline := s.cfg.Limits.submitDeadline(time.Now())
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	release, err := s.submits.acquire(r.Context())
	if err != nil {
		return err
	}
	if !deadline.IsZero() {
		_ = http.NewResponseController(w).SetReadDeadline(deadline) // unsupported by test recorders
	}
	sub, err := s.submission(r, p)
	if err != nil {
		release()
		return err
	}
	sub.IdempotencyKey = key
	res := s.submitBy(r.Context(), &sub, deadline, release)
	if res.err != nil {
		return res.err
	}
	if res.replayed {
		w.Header().Set(headerReplayed, "true")
	}
	writeJSON(w, http.StatusCreated, res.run)
	return nil
}

// submitted is what a submission came to: its run, and whether an
// earlier submission with its key created it.
type submitted struct {
	run      *apiv1.Run
	replayed bool
	err      error
}

// submitBy checks and saves sub, and returns what it came to by
// deadline (zero: however long it takes): past it, KLN-4062, and the
// submission, still being checked, saves nothing. release is called once
// the checking ends, whenever that is: until then it holds its memory.
func (s *Server) submitBy(ctx context.Context, sub *apiv1.Submission, deadline time.Time, release func()) submitted {
	var gate commitGate
	sub.Commit = gate.commit
	done := make(chan submitted, 1)
	go func() {
		defer release()
		done <- s.create(ctx, sub)
	}()
	if deadline.IsZero() {
		return <-done
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case res := <-done:
		return res
	case <-timer.C:
	}
	if gate.late() {
		return submitted{err: late(errSubmitLate)}
	}
	return <-done // it is saving the run: the margin is for that
}

// create answers sub with the run its key created before, if the engine
// keeps keys and there is one, or else with the run it creates.
func (s *Server) create(ctx context.Context, sub *apiv1.Submission) (res submitted) {
	defer func() {
		if p := recover(); p != nil {
			res = submitted{err: fmt.Errorf("checking a submission: panic: %v", p)}
		}
	}()
	if once, ok := s.cfg.Engine.(onceSubmitter); ok {
		run, replayed, err := once.SubmitOnce(ctx, *sub)
		return submitted{run: run, replayed: replayed, err: late(err)}
	}
	run, err := s.cfg.Engine.Submit(ctx, *sub)
	return submitted{run: run, err: late(err)}
}

// submission reads the submission r sends as p: in project "default" if
// it names none, and without a working directory unless it comes from
// this machine.
func (s *Server) submission(r *http.Request, p *principal) (apiv1.Submission, error) {
	sub, err := submission(r)
	if err != nil {
		return sub, err
	}
	if sub.Project == "" {
		sub.Project = "default"
	}
	if !p.may(sub.Project) {
		return sub, forbidden("the token may not submit to project %q", sub.Project)
	}
	if !fromThisMachine(r) {
		sub.WorkDir = ""
	}
	return sub, nil
}

// submission reads a submission from a request.
func submission(r *http.Request) (apiv1.Submission, error) {
	q := r.URL.Query()
	sub := apiv1.Submission{Project: q.Get("project"), WorkDir: q.Get("workdir"), Cache: apiv1.CacheMode(q.Get("cache")), Params: map[string]string{}}
	for _, kv := range q["param"] {
		if err := addParam(sub.Params, kv); err != nil {
			return sub, err
		}
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		return sub, readParts(r, &sub)
	}
	body, err := readBody(r.Body)
	name := q.Get("file")
	if name == "" {
		name = "request"
	}
	sub.Files = []apiv1.SourceFile{{Name: name, Data: body}}
	return sub, err
}

// readParts reads a multipart submission's files and fields.
func readParts(r *http.Request, sub *apiv1.Submission) error {
	mr, err := r.MultipartReader()
	if err != nil {
		return badRequest("reading the multipart body: %v", err)
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return tooLargeOr(err, "reading the multipart body")
		}
		b, err := readBody(part)
		if err != nil {
			return err
		}
		switch part.FormName() {
		case "file":
			name := fileName(part)
			if name == "" {
				name = fmt.Sprintf("request file %d", len(sub.Files)+1)
			}
			sub.Files = append(sub.Files, apiv1.SourceFile{Name: name, Data: b})
		case "param":
			err = addParam(sub.Params, string(b))
		case "project":
			sub.Project = string(b)
		case "workdir":
			sub.WorkDir = string(b)
		case "cache":
			sub.Cache = apiv1.CacheMode(b)
		default:
			err = badRequest("unknown form field %q: send file, param, project, workdir or cache", part.FormName())
		}
		if err != nil {
			return err
		}
	}
}

// fileName is a file part's name as the client sent it, directories and
// all: it names the file in errors and, from this machine, places it.
// (Part.FileName keeps only the last element.)
func fileName(p *multipart.Part) string {
	if _, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition")); err == nil {
		return params["filename"]
	}
	return p.FileName()
}

func readBody(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, tooLargeOr(err, "reading the body")
	}
	return b, nil
}

// tooLargeOr is a 413 if err says the body was over the limit, a 408 if
// it did not arrive in time, else a 400.
func tooLargeOr(err error, doing string) error {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return bodyTooLarge(tooLarge.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return &httpError{status: http.StatusRequestTimeout, err: &apiv1.Error{
			Code: apiv1.CodeBadRequest, Message: doing + ": the body did not arrive within the server's read timeout",
			Hint: "send the body at once, or over a faster link; the server's --read-timeout bounds a whole request",
		}}
	}
	return badRequest("%s: %v", doing, err)
}

func addParam(params map[string]string, kv string) error {
	name, value, ok := strings.Cut(kv, "=")
	if !ok || name == "" {
		return badRequest("param %q is not name=value", kv)
	}
	params[name] = value
	return nil
}

// fromThisMachine reports whether the request came over loopback, from a
// client that shares the server's files.
func fromThisMachine(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
