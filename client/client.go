// Package client is a Go client for kiln's HTTP API (kiln serve). The CLI
// uses it with --server; errors come back as the same coded *apiv1.Error
// values the server sent.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Client talks to one kiln server with one token.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// New returns a client for the server at base ("http://127.0.0.1:8420").
func New(base, token string) *Client {
	return &Client{base: strings.TrimRight(base, "/"), token: token, http: &http.Client{}}
}

// Submit sends a Workflow or TrainJob (with TrainingRuntimes beside it),
// file by file, and returns the new run. A server on the client's machine
// starts tasks in s.WorkDir's files' directory, as kiln run does.
//
// It sends s.IdempotencyKey, or a new random key if it is empty, and
// sends the submission again, with the same key, when the server could
// not take it now (503, after its Retry-After) or its answer did not
// come (the connection failed): up to submitTries times in all. The
// server creates one run for them, and answers each with it.
func (c *Client) Submit(ctx context.Context, s apiv1.Submission) (*apiv1.Run, error) {
	run, _, err := c.SubmitOnce(ctx, s)
	return run, err
}

// SubmitOnce is Submit, and says whether the server answered with the
// run an earlier submission with the same idempotency key created
// (Idempotency-Replayed), so that nothing new was submitted.
func (c *Client) SubmitOnce(ctx context.Context, s apiv1.Submission) (run *apiv1.Run, replayed bool, err error) {
	params := make([]string, 0, len(s.Params))
	for k, v := range s.Params {
		params = append(params, k+"="+v)
	}
	body, contentType, err := multipartFiles(s.Files, map[string][]string{
		"param": params, "project": nonEmpty(s.Project), "workdir": nonEmpty(s.WorkDir), "cache": nonEmpty(string(s.Cache)),
	})
	if err != nil {
		return nil, false, err
	}
	key := s.IdempotencyKey
	if key == "" {
		key = newKey()
	}
	return c.postRetrying(ctx, "/api/v1/runs", body, http.Header{"Content-Type": {contentType}, "Idempotency-Key": {key}})
}

// multipartFiles writes files, one "file" part each, and fields as a
// multipart/form-data body, and returns it with its content type.
func multipartFiles(files []apiv1.SourceFile, fields map[string][]string) ([]byte, string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, f := range files {
		part, err := mw.CreateFormFile("file", f.Name)
		if err != nil {
			return nil, "", err
		}
		if _, err := part.Write(f.Data); err != nil {
			return nil, "", err
		}
	}
	for name, values := range fields {
		for _, v := range values {
			if err := mw.WriteField(name, v); err != nil {
				return nil, "", err
			}
		}
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return body.Bytes(), mw.FormDataContentType(), nil
}

// nonEmpty is s as a field's one value, or no value when s is empty.
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// GetRun returns one run with its nodes, attempts and conditions.
func (c *Client) GetRun(ctx context.Context, id apiv1.RunID) (*apiv1.Run, error) {
	var run apiv1.Run
	return &run, c.do(ctx, "GET", "/api/v1/runs/"+url.PathEscape(string(id)), nil, &run)
}

// ListRuns returns a page of runs, newest first (oldest first with
// q.Ascending).
func (c *Client) ListRuns(ctx context.Context, q apiv1.RunQuery) (*apiv1.RunList, error) {
	v := runQueryValues(q)
	var list apiv1.RunList
	return &list, c.do(ctx, "GET", "/api/v1/runs?"+v.Encode(), nil, &list)
}

// Events returns a run's events after sequence number after.
func (c *Client) Events(ctx context.Context, id apiv1.RunID, after int64) ([]apiv1.Event, error) {
	var out struct{ Items []apiv1.Event }
	err := c.do(ctx, "GET", fmt.Sprintf("/api/v1/runs/%s/events?after=%d", url.PathEscape(string(id)), after), nil, &out)
	return out.Items, err
}

// Cancel asks the server to cancel a run.
func (c *Client) Cancel(ctx context.Context, id apiv1.RunID) error {
	return c.do(ctx, "POST", "/api/v1/runs/"+url.PathEscape(string(id))+"/cancel", nil, nil)
}

// Stop asks the server to stop a run: its running tasks are stopped,
// nothing else starts, and its exit handlers run.
func (c *Client) Stop(ctx context.Context, id apiv1.RunID) error {
	return c.do(ctx, "POST", "/api/v1/runs/"+url.PathEscape(string(id))+"/stop", nil, nil)
}

// DeleteRun deletes a run that has ended: its records, logs and outputs.
// With force the server cancels an unfinished run first and deletes it
// once it has ended. KLN-4010 for a run that has not ended (or did not
// end in time), KLN-4001 for an unknown one.
func (c *Client) DeleteRun(ctx context.Context, id apiv1.RunID, force bool) error {
	return c.do(ctx, "DELETE", "/api/v1/runs/"+url.PathEscape(string(id))+"?force="+strconv.FormatBool(force), nil, nil)
}

// Retry asks the server to run a Failed or Cancelled run again from
// where it stopped, as req says.
func (c *Client) Retry(ctx context.Context, id apiv1.RunID, req apiv1.RetryRequest) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	return c.doType(ctx, "POST", "/api/v1/runs/"+url.PathEscape(string(id))+"/retry", "application/json", b, nil)
}

// Suspend asks the server to suspend (or unsuspend) a run's training jobs.
func (c *Client) Suspend(ctx context.Context, id apiv1.RunID, suspend bool) error {
	verb := map[bool]string{true: "suspend", false: "unsuspend"}[suspend]
	return c.do(ctx, "POST", "/api/v1/runs/"+url.PathEscape(string(id))+"/"+verb, nil, nil)
}

// SendGateInput sends an approval or a rejection (in.Approve) or a signal
// (in.Value), with in.Reason, to gate task node of run id. The server
// records who sent it from the client's token and when it arrived, so
// in.By and in.At are not sent. KLN-4014 when the task is not a gate
// waiting for this input.
func (c *Client) SendGateInput(ctx context.Context, id apiv1.RunID, node string, in apiv1.GateInput) error {
	var verb string
	var body any
	switch {
	case in.Approve != nil && in.Value == nil:
		verb, body = "approve", map[string]any{"approve": *in.Approve, "reason": in.Reason}
	case in.Value != nil && in.Approve == nil:
		verb, body = "signal", map[string]any{"value": *in.Value, "reason": in.Reason}
	default:
		return apiv1.Errorf(apiv1.CodeBadRequest, "an input is an approval or a value, and not both")
	}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	path := "/api/v1/runs/" + url.PathEscape(string(id)) + "/nodes/" + url.PathEscape(node) + "/" + verb
	return c.doType(ctx, "POST", path, "application/json", b, nil)
}

// Runtimes lists the server's built-in training runtimes.
func (c *Client) Runtimes(ctx context.Context) ([]apiv1.TrainingRuntime, error) {
	var out struct{ Items []apiv1.TrainingRuntime }
	return out.Items, c.do(ctx, "GET", "/api/v1/runtimes", nil, &out)
}

// SetSecret sets a secret of project to value.
func (c *Client) SetSecret(ctx context.Context, project, name, value string) error {
	return c.do(ctx, "PUT", "/api/v1/secrets/"+url.PathEscape(name)+"?project="+url.QueryEscape(project), []byte(value), nil)
}

// SecretNames lists a project's secrets, never their values.
func (c *Client) SecretNames(ctx context.Context, project string) ([]string, error) {
	var out struct{ Items []string }
	return out.Items, c.do(ctx, "GET", "/api/v1/secrets?project="+url.QueryEscape(project), nil, &out)
}

// DeleteSecret removes a secret of project.
func (c *Client) DeleteSecret(ctx context.Context, project, name string) error {
	return c.do(ctx, "DELETE", "/api/v1/secrets/"+url.PathEscape(name)+"?project="+url.QueryEscape(project), nil, nil)
}

// ApplyTemplates sends the WorkflowTemplates of in.Files, file by file,
// for the server to check and store in in.Project, and returns them as
// stored. Nothing is stored when any is invalid.
func (c *Client) ApplyTemplates(ctx context.Context, in apiv1.TemplateApply) ([]*apiv1.WorkflowTemplate, error) {
	if in.Name != "" {
		if len(in.Files) != 1 {
			return nil, apiv1.Errorf(apiv1.CodeUsage, "a template applied by name comes in one file")
		}
		var t apiv1.WorkflowTemplate
		path := "/api/v1/templates/" + url.PathEscape(in.Name) + "?" + url.Values{"project": nonEmpty(in.Project), "file": {in.Files[0].Name}}.Encode()
		if err := c.do(ctx, "PUT", path, in.Files[0].Data, &t); err != nil {
			return nil, err
		}
		return []*apiv1.WorkflowTemplate{&t}, nil
	}
	body, contentType, err := multipartFiles(in.Files, map[string][]string{"project": nonEmpty(in.Project)})
	if err != nil {
		return nil, err
	}
	var out struct{ Items []*apiv1.WorkflowTemplate }
	return out.Items, c.doType(ctx, "POST", "/api/v1/templates", contentType, body, &out)
}

// ListTemplates lists a project's stored templates, by name.
func (c *Client) ListTemplates(ctx context.Context, project string) ([]*apiv1.WorkflowTemplate, error) {
	var out struct{ Items []*apiv1.WorkflowTemplate }
	return out.Items, c.do(ctx, "GET", "/api/v1/templates?project="+url.QueryEscape(project), nil, &out)
}

// GetTemplate returns a stored template of project; KLN-4015 if there is none.
func (c *Client) GetTemplate(ctx context.Context, project, name string) (*apiv1.WorkflowTemplate, error) {
	var t apiv1.WorkflowTemplate
	return &t, c.do(ctx, "GET", "/api/v1/templates/"+url.PathEscape(name)+"?project="+url.QueryEscape(project), nil, &t)
}

// DeleteTemplate removes a stored template of project; KLN-4015 if there is none.
func (c *Client) DeleteTemplate(ctx context.Context, project, name string) error {
	return c.do(ctx, "DELETE", "/api/v1/templates/"+url.PathEscape(name)+"?project="+url.QueryEscape(project), nil, nil)
}

// Logs copies what a task's processes wrote to w (see apiv1.LogQuery).
func (c *Client) Logs(ctx context.Context, q apiv1.LogQuery, w io.Writer) error {
	path := fmt.Sprintf("/api/v1/runs/%s/tasks/%s/logs?follow=%t", url.PathEscape(string(q.Run)), url.PathEscape(q.Task), q.Follow)
	path += logParams(q)
	resp, err := c.send(ctx, "GET", path, "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(w, resp.Body)
	if ctx.Err() != nil {
		return nil // the caller stopped following
	}
	return err
}

// logParams are the query parameters of q beyond run, task and follow.
func logParams(q apiv1.LogQuery) string {
	v := url.Values{}
	if q.Attempt > 0 {
		v.Set("attempt", strconv.Itoa(q.Attempt))
	}
	if q.Tail > 0 {
		v.Set("tail", strconv.Itoa(q.Tail))
	}
	if q.Since != nil {
		v.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	if q.Timestamps {
		v.Set("timestamps", "true")
	}
	if len(v) == 0 {
		return ""
	}
	return "&" + v.Encode()
}

func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	return c.doType(ctx, method, path, "", body, out)
}

func (c *Client) doType(ctx context.Context, method, path, contentType string, body []byte, out any) error {
	resp, err := c.send(ctx, method, path, contentType, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// send makes a request and turns an error response into its coded errors.
func (c *Client) send(ctx context.Context, method, path, contentType string, body []byte) (*http.Response, error) {
	header := http.Header{}
	if contentType != "" {
		header.Set("Content-Type", contentType)
	}
	resp, err := c.roundTrip(ctx, method, path, body, header)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, responseError(method, path, resp)
}

// roundTrip makes a request with header and the client's token. A
// request that got no answer is KLN-5060 (or ctx's error, if ctx ended).
func (c *Client) roundTrip(ctx context.Context, method, path string, body []byte, header http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = header
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, unreachable(c.base, err)
	}
	return resp, nil
}

// responseError is the coded errors of an error response.
func responseError(method, path string, resp *http.Response) error {
	var e struct{ Errors []*apiv1.Error }
	if json.NewDecoder(resp.Body).Decode(&e) != nil || len(e.Errors) == 0 {
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	return apiErrors(e.Errors)
}

// WaitDone polls a run until it ends or ctx does, and returns it.
func (c *Client) WaitDone(ctx context.Context, id apiv1.RunID, every time.Duration) (*apiv1.Run, error) {
	for {
		run, err := c.GetRun(ctx, id)
		if err != nil || run.Status.Phase.Done() {
			return run, err
		}
		select {
		case <-ctx.Done():
			return run, ctx.Err()
		case <-time.After(every):
		}
	}
}
