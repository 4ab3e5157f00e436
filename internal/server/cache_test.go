package server

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/cache"
)

// seedCache stores a result of project's workflow/task whose one artifact
// holds content, last used at used, in the server's cache, and returns
// its key.
func (e *env) seedCache(t *testing.T, project, workflow, task, content string, used time.Time) string {
	t.Helper()
	key, err := cache.KeyOf([]string{project, workflow, task, content})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "out"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	entry := &apiv1.CacheEntry{
		Key: key, Project: project, Workflow: workflow, Task: task, SourceRun: apiv1.RunID("r-" + task), SourceNode: task,
		Artifacts: []apiv1.CachedArtifact{{Name: "out", Path: "out"}}, CreatedAt: used, UsedAt: used,
	}
	if err := e.srv.cfg.Cache.(*app.App).Cache.Save(t.Context(), entry, dir); err != nil {
		t.Fatal(err)
	}
	return key
}

// cacheKeys lists the keys the server shows token at path.
func (e *env) cacheKeys(t *testing.T, token, path string) []string {
	t.Helper()
	resp, b := e.do(t, "GET", path, token, "")
	var list struct{ Items []*apiv1.CacheEntry }
	if err := json.Unmarshal(b, &list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %s", path, resp.StatusCode, b)
	}
	keys := []string{}
	for _, c := range list.Items {
		keys = append(keys, c.Key)
	}
	return keys
}

// codes are the error codes of a response body.
func codes(b []byte) []apiv1.Code {
	var body struct{ Errors []apiv1.Error }
	_ = json.Unmarshal(b, &body)
	var out []apiv1.Code
	for _, e := range body.Errors {
		out = append(out, e.Code)
	}
	return out
}

func TestCacheIsListedPerProjectTheTokenMayRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := time.Now()
	a1 := e.seedCache(t, "a", "wf", "train", "aaaa", now.Add(-time.Hour))
	a2 := e.seedCache(t, "a", "other", "eval", "aa", now.Add(-time.Minute))
	b1 := e.seedCache(t, "b", "wf", "train", "bbbbbb", now.Add(-2*time.Hour))

	for name, tc := range map[string]struct {
		token, path string
		want        []string
	}{
		"every project, most recently used first": {e.viewer, "/api/v1/cache", []string{a2, a1, b1}},
		"one project":           {e.viewer, "/api/v1/cache?project=b", []string{b1}},
		"one workflow and task": {e.viewer, "/api/v1/cache?workflow=wf&task=train", []string{a1, b1}},
		"a token of project a sees only a's entries": {e.editorA, "/api/v1/cache", []string{a2, a1}},
		"a project without entries":                  {e.admin, "/api/v1/cache?project=c", []string{}},
	} {
		if diff := cmp.Diff(tc.want, e.cacheKeys(t, tc.token, tc.path)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	if resp, b := e.do(t, "GET", "/api/v1/cache?project=b", e.editorA, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a token of a listing b = %d %s, want 403", resp.StatusCode, b)
	}
	if resp, _ := e.do(t, "GET", "/api/v1/cache", "", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("listing without a token = %d, want 401", resp.StatusCode)
	}
}

func TestCacheEntriesAreRemovedByKeyOrPrefix(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := time.Now()
	a1 := e.seedCache(t, "a", "wf", "train", "aaaa", now)
	b1 := e.seedCache(t, "b", "wf", "train", "bbbbbb", now)
	prefix := func(key string) string { return strings.TrimPrefix(key, "sha256:")[:12] }

	if resp, b := e.do(t, "DELETE", "/api/v1/cache/"+prefix(a1), e.viewer, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer removing = %d %s, want 403", resp.StatusCode, b)
	}
	resp, b := e.do(t, "DELETE", "/api/v1/cache/sha256:0123456789abcdef", e.admin, "")
	if resp.StatusCode != http.StatusNotFound || !cmp.Equal(codes(b), []apiv1.Code{apiv1.CodeNoCacheEntry}) {
		t.Errorf("removing an unknown key = %d %s, want 404 KLN-4025", resp.StatusCode, b)
	}
	if resp, b := e.do(t, "DELETE", "/api/v1/cache/abc", e.admin, ""); resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "KLN-1012") {
		t.Errorf("removing by a 3-digit prefix = %d %s, want 400 KLN-1012", resp.StatusCode, b)
	}
	resp, b = e.do(t, "DELETE", "/api/v1/cache/"+prefix(b1), e.editorA, "")
	if resp.StatusCode != http.StatusNotFound || !cmp.Equal(codes(b), []apiv1.Code{apiv1.CodeNoCacheEntry}) {
		t.Errorf("a token of a removing b's entry = %d %s, want 404 KLN-4025 as if it were not there", resp.StatusCode, b)
	}

	resp, b = e.do(t, "DELETE", "/api/v1/cache/"+prefix(a1), e.editorA, "")
	var out apiv1.CachePruned
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != http.StatusOK || out != (apiv1.CachePruned{Entries: 1, Bytes: 4}) {
		t.Errorf("removing a's entry by prefix = %d %s, want 200 with 1 entry and 4 bytes", resp.StatusCode, b)
	}
	if diff := cmp.Diff([]string{b1}, e.cacheKeys(t, e.admin, "/api/v1/cache")); diff != "" {
		t.Errorf("after the removals (-want +got):\n%s", diff)
	}
	resp, b = e.do(t, "DELETE", "/api/v1/cache/"+b1+"?project=a", e.admin, "")
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("removing b's entry among a's = %d %s, want 404", resp.StatusCode, b)
	}
}

func TestCacheIsPruned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := time.Now()
	e.seedCache(t, "a", "wf", "train", "aaaa", now)
	old := e.seedCache(t, "a", "wf", "eval", "aa", now.Add(-48*time.Hour))
	b1 := e.seedCache(t, "b", "wf", "train", "bbbbbb", now)
	prune := func(token, body string) (int, []byte, apiv1.CachePruned) {
		t.Helper()
		resp, b := e.do(t, "POST", "/api/v1/cache/prune", token, body)
		var out apiv1.CachePruned
		_ = json.Unmarshal(b, &out)
		return resp.StatusCode, b, out
	}

	for name, body := range map[string]string{
		"every project's, by a token of a": `{"all": true}`,
		"b's, by a token of a":             `{"all": true, "project": "b"}`,
	} {
		if status, b, _ := prune(e.editorA, body); status != http.StatusForbidden {
			t.Errorf("pruning %s = %d %s, want 403", name, status, b)
		}
	}
	if status, b, _ := prune(e.viewer, `{"project": "a"}`); status != http.StatusForbidden {
		t.Errorf("a viewer pruning = %d %s, want 403", status, b)
	}
	status, b, _ := prune(e.admin, `{"olderThan": "soon", "maxSize": "lots"}`)
	if status != http.StatusBadRequest || !cmp.Equal(codes(b), []apiv1.Code{apiv1.CodeDuration, apiv1.CodeQuantity}) ||
		!strings.Contains(string(b), `"field":"olderThan"`) || !strings.Contains(string(b), `"field":"maxSize"`) {
		t.Errorf("pruning with a bad duration and size = %d %s, want 400 with KLN-1009 olderThan and KLN-1010 maxSize", status, b)
	}
	if status, b, _ := prune(e.admin, `{"everything": true}`); status != http.StatusBadRequest {
		t.Errorf("pruning with an unknown field = %d %s, want 400", status, b)
	}

	if status, b, out := prune(e.editorA, `{"project": "a", "olderThan": "24h"}`); status != http.StatusOK || out != (apiv1.CachePruned{Entries: 1, Bytes: 2}) {
		t.Errorf("pruning a's entries unused for a day = %d %s, want 1 entry of 2 bytes", status, b)
	}
	keys := e.cacheKeys(t, e.admin, "/api/v1/cache")
	if len(keys) != 2 || strings.Contains(strings.Join(keys, " "), old) {
		t.Errorf("after pruning a's old entry the cache holds %v, want the other two", keys)
	}
	if status, b, out := prune(e.admin, `{"all": true, "project": "a"}`); status != http.StatusOK || out.Entries != 1 {
		t.Errorf("pruning all of a = %d %s, want 1 entry", status, b)
	}
	if diff := cmp.Diff([]string{b1}, e.cacheKeys(t, e.admin, "/api/v1/cache")); diff != "" {
		t.Errorf("after pruning all of a (-want +got):\n%s", diff)
	}
}

func TestSubmissionCacheModeIsChecked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	resp, b := e.do(t, "POST", "/api/v1/runs?cache=sometimes", e.admin, workflowYAML)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "KLN-1012") || !strings.Contains(string(b), "overwrite") {
		t.Errorf("submitting with cache=sometimes = %d %s, want 400 KLN-1012 listing the modes", resp.StatusCode, b)
	}
	resp, b = e.do(t, "POST", "/api/v1/runs?cache=off", e.admin, workflowYAML)
	var run apiv1.Run
	if err := json.Unmarshal(b, &run); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("submitting with cache=off = %d %s", resp.StatusCode, b)
	}
	if done := e.waitDone(t, run.ID); done.Cache != apiv1.CacheOff {
		t.Errorf("the run's cache mode = %q, want off as submitted", done.Cache)
	}
}
