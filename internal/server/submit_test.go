package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/client"
)

// A submission of several files names each in its errors, as the
// submitter named them, directories and all.
func TestMultipartSubmissionNamesItsFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := client.New(e.url, e.admin)
	_, err := c.Submit(t.Context(), apiv1.Submission{Files: []apiv1.SourceFile{
		{Name: "pipelines/wf.yaml", Data: []byte(strings.Replace(workflowYAML, "dependsOn: [greet]", "dependsOn: [nope]", 1))},
		{Name: "runtimes/empty.yaml", Data: []byte("# nothing\n")},
	}})
	for _, want := range []string{"KLN-1007 pipelines/wf.yaml:8:31: Workflow/hello", "KLN-1013 runtimes/empty.yaml"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Submit = %v, want it to say %q", err, want)
		}
	}
	run, err := c.Submit(t.Context(), apiv1.Submission{
		Files: []apiv1.SourceFile{{Name: "wf.yaml", Data: []byte(workflowYAML)}}, Params: map[string]string{"who": "multipart"}, Project: "a",
	})
	if err != nil || run.Project != "a" || run.Params["who"] != "multipart" || run.Source != "wf.yaml" {
		t.Errorf("Submit = %+v, %v; want project a, who=multipart, source wf.yaml", run, err)
	}
}

// The submitter's directory is used for requests from this machine only.
func TestWorkDirIsTrustedFromThisMachineOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		remote  string
		wantDir string
	}{
		"loopback":        {"127.0.0.1:40000", dir},
		"loopback, IPv6":  {"[::1]:40000", dir},
		"another machine": {"192.0.2.7:40000", ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			eng := &recordingEngine{}
			srv := New(Config{Engine: eng})
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			fw, err := mw.CreateFormFile("file", "wf.yaml")
			if err == nil {
				_, err = fw.Write([]byte(workflowYAML))
			}
			if err := errors.Join(err, mw.WriteField("workdir", dir), mw.Close()); err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest("POST", "/api/v1/runs", &body)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			req.RemoteAddr = tc.remote
			w := httptest.NewRecorder()
			if err := srv.submit(w, req, &principal{role: admin, projects: []string{"*"}}); err != nil {
				t.Fatal(err)
			}
			if eng.got.WorkDir != tc.wantDir {
				t.Errorf("work dir passed on = %q, want %q", eng.got.WorkDir, tc.wantDir)
			}
		})
	}
}

// recordingEngine keeps the submission it was given.
type recordingEngine struct {
	Engine
	got apiv1.Submission
}

func (r *recordingEngine) Submit(_ context.Context, s apiv1.Submission) (*apiv1.Run, error) {
	r.got = s
	return &apiv1.Run{ID: "r"}, nil
}

func TestRefusalsOfARunsPhaseAre409(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := e.submit(t, e.admin, "")
	e.waitDone(t, run.ID)
	for _, verb := range []string{"cancel", "suspend", "unsuspend", "retry"} {
		resp, b := e.do(t, "POST", "/api/v1/runs/"+string(run.ID)+"/"+verb, e.admin, "")
		var out struct{ Errors []apiv1.Error }
		_ = json.Unmarshal(b, &out)
		if resp.StatusCode != http.StatusConflict || len(out.Errors) == 0 || out.Errors[0].Code != apiv1.CodeRunPhase {
			t.Errorf("%s of a Succeeded run = %d %s, want 409 with %s", verb, resp.StatusCode, b, apiv1.CodeRunPhase)
		}
	}
	if resp, _ := e.do(t, "DELETE", "/api/v1/secrets/nothing", e.admin, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("deleting a secret that does not exist = %d, want 404", resp.StatusCode)
	}
}
