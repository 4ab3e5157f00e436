package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/workflow"
)

// FuzzSubmit sends arbitrary submissions (query, Content-Type, body, with
// or without a Content-Length) through the server's handler, auth and
// limits included: it must never panic, and must answer either a created
// run or the API's error shape with registered codes, never a 500.
//
//	go test -run '^$' -fuzz FuzzSubmit -fuzztime 30s ./internal/server
//
// The engine reads and checks each submission as the embedded engine
// does (workflow.LoadSubmission) but runs nothing: fuzzed workflows are
// commands.
func FuzzSubmit(f *testing.F) {
	e := newEnvWith(f, func(c *Config) {
		c.Engine = checkingEngine{}
		c.Limits.Rate, c.Limits.MaxSubmits = -1, -1
	})
	multi, multiType := multipartSeed(f)
	for _, seed := range []struct {
		query, contentType string
		body               []byte
		known              bool
	}{
		{"", "application/yaml", []byte(workflowYAML), true},
		{"project=a&param=who=fuzz&file=wf.yaml", "", []byte(workflowYAML), false},
		{"", multiType, multi, true},
		{"", "multipart/form-data; boundary=x", []byte("--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a/b.yaml\"\r\n\r\nkind: Workflow\r\n--x--\r\n"), true},
		{"", "application/json", []byte(`{"apiVersion":"kiln.dev/v1alpha1","kind":"Workflow","metadata":{"name":"j"},"spec":{"tasks":[{"name":"t","command":["true"]}]}}`), true},
		{"param=novalue", "", []byte("{{{not yaml"), true},
		{"", "", []byte("apiVersion: kiln.dev/v1alpha1\nkind: TrainJob\nmetadata: {name: t}\nspec: {runtimeRef: {name: torch-distributed}}\n"), true},
		{"", "", []byte("---\n---\n"), true},
		{"", "", nil, true},
		{"", "", bytes.Repeat([]byte("- a\n"), 20_000), false},
	} {
		f.Add(seed.query, seed.contentType, seed.body, seed.known)
	}
	h := e.srv.Handler()
	f.Fuzz(func(t *testing.T, query, contentType string, body []byte, known bool) {
		req := httptest.NewRequest("POST", "/api/v1/runs", bytes.NewReader(body))
		req.URL.RawQuery = query
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Authorization", "Bearer "+e.admin)
		if !known {
			req.ContentLength = -1
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		checkSubmitAnswer(t, w)
	})
}

// checkSubmitAnswer checks that a submission was answered with a run, or
// with errors that all carry a code kiln registers.
func checkSubmitAnswer(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	if w.Code == http.StatusCreated {
		var run apiv1.Run
		if err := json.Unmarshal(w.Body.Bytes(), &run); err != nil || run.ID == "" {
			t.Fatalf("201 without a run: %s", w.Body)
		}
		return
	}
	var out struct{ Errors []apiv1.Error }
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || len(out.Errors) == 0 {
		t.Fatalf("%d without the errors shape: %q", w.Code, w.Body)
	}
	if w.Code < 400 || w.Code == http.StatusInternalServerError {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	for _, e := range out.Errors {
		if !slices.ContainsFunc(apiv1.CodeInfos(), func(c apiv1.CodeInfo) bool { return c.Code == e.Code }) {
			t.Fatalf("code %q is not registered: %s", e.Code, w.Body)
		}
	}
}

// checkingEngine checks a submission as the embedded engine does, and
// runs nothing.
type checkingEngine struct{ Engine }

func (checkingEngine) Submit(_ context.Context, s apiv1.Submission) (*apiv1.Run, error) {
	l, err := workflow.LoadSubmission(&s, nil)
	if err != nil {
		return nil, err
	}
	return &apiv1.Run{ID: apiv1.RunID(l.Doc.Name + "-fuzz"), Project: s.Project}, nil
}

func multipartSeed(f *testing.F) ([]byte, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, err := mw.CreateFormFile("file", "pipelines/wf.yaml")
	if err == nil {
		_, err = fw.Write([]byte(workflowYAML))
	}
	if err := errors.Join(err, mw.WriteField("param", "who=parts"), mw.WriteField("project", "a"), mw.Close()); err != nil {
		f.Fatal(err)
	}
	return b.Bytes(), mw.FormDataContentType()
}
