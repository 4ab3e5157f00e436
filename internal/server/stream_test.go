package server

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Following a run's logs and events lasts as long as the run does, far
// past the read and write timeouts, which still cut off everything else.
func TestStreamsOutlastTheTimeouts(t *testing.T) {
	t.Parallel()
	const timeout = 2 * time.Second
	e := newEnvWith(t, func(c *Config) { c.Limits.ReadTimeout, c.Limits.WriteTimeout = timeout, timeout })
	slow := "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: slow}\n" +
		"spec: {tasks: [{name: t, command: [sh, -c, 'echo one; sleep 5; echo two']}]}\n"
	resp, b := e.do(t, "POST", "/api/v1/runs", e.admin, slow)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("submit: %d %s", resp.StatusCode, b)
	}
	id := runID(t, b)

	logs, events := make(chan string, 1), make(chan []string, 1)
	go func() {
		_, b := e.do(t, "GET", "/api/v1/runs/"+string(id)+"/tasks/t/logs?follow=true", e.viewer, "")
		logs <- string(b)
	}()
	go func() {
		req, _ := http.NewRequest("GET", e.url+"/api/v1/runs/"+string(id)+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+e.viewer)
		req.Header.Set("Accept", "text/event-stream")
		var reasons []string
		defer func() { events <- reasons }()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		for sse := bufio.NewScanner(resp.Body); sse.Scan(); {
			if r, ok := strings.CutPrefix(sse.Text(), "event: "); ok {
				reasons = append(reasons, r)
			}
		}
	}()
	start := time.Now()
	if got := <-logs; got != "one\ntwo\n" {
		t.Errorf("followed logs = %q, want both lines, written 5s apart", got)
	}
	got := <-events
	t.Logf("the streams lasted %v, with read and write timeouts of %v", time.Since(start), timeout)
	run := e.waitDone(t, id)
	_, b = e.do(t, "GET", "/api/v1/runs/"+string(id)+"/events", e.viewer, "")
	if want := strings.Count(string(b), `"seq"`); len(got) != want || run.Status.Phase != apiv1.PhaseSucceeded {
		t.Errorf("the event stream carried %d events (%v) of the run's %d; the run %s", len(got), got, want, run.Status.Phase)
	}
}

func runID(t *testing.T, body []byte) apiv1.RunID {
	t.Helper()
	var run apiv1.Run
	if err := json.Unmarshal(body, &run); err != nil || run.ID == "" {
		t.Fatalf("no run in %s", body)
	}
	return run.ID
}
