package client_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
)

// seed stores a result of project's task whose one artifact holds
// content, and returns its key.
func seed(t *testing.T, a *app.App, key, project, task, content string, used time.Time) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "out"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &apiv1.CacheEntry{
		Key: key, Project: project, Workflow: "wf", Task: task, SourceRun: "r1", SourceNode: task,
		Artifacts: []apiv1.CachedArtifact{{Name: "out", Path: "out"}}, CreatedAt: used, UsedAt: used,
	}
	if err := a.Cache.Save(t.Context(), e, dir); err != nil {
		t.Fatal(err)
	}
	return key
}

// The client and the embedded engine answer the cache's questions alike.
func TestCacheThroughTheClientAsEmbedded(t *testing.T) {
	t.Parallel()
	c, a, _ := newServer(t)
	now := time.Now().UTC()
	k1 := seed(t, a, "sha256:1111111111aa", "p", "train", "one", now.Add(-time.Minute))
	k2 := seed(t, a, "sha256:1111111111bb", "p", "eval", "two!", now)
	k3 := seed(t, a, "sha256:3333333333cc", "q", "train", "three", now.Add(-time.Hour))

	for _, q := range []apiv1.CacheQuery{{}, {Project: "p"}, {Task: "train"}, {Project: "none"}} {
		viaClient, err := c.CacheEntries(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		embedded, err := a.CacheEntries(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(embedded, viaClient); diff != "" {
			t.Errorf("CacheEntries(%+v) through the client (-embedded +client):\n%s", q, diff)
		}
	}

	for name, keys := range map[string][]string{
		"an unknown key":                {"sha256:99999999"},
		"a prefix of two keys":          {"11111111"},
		"a prefix too short":            {"1111"},
		"a key of another project":      {"33333333"},
		"a known key then unknown ones": {"sha256:1111111111aa", "deadbeef"},
	} {
		project := "p"
		_, embeddedErr := a.RemoveCacheEntries(t.Context(), project, keys)
		if embeddedErr == nil {
			t.Fatalf("%s: removing %v embedded succeeded", name, keys)
		}
		if name == "a known key then unknown ones" {
			continue // embedded removes none; the client one at a time
		}
		_, clientErr := c.RemoveCacheEntries(t.Context(), project, keys)
		if apiv1.CodeOf(clientErr) != apiv1.CodeOf(embeddedErr) {
			t.Errorf("%s: the client says %v, embedded %v; want the same code", name, clientErr, embeddedErr)
		}
	}
	if list, _ := a.CacheEntries(t.Context(), apiv1.CacheQuery{}); len(list) != 3 {
		t.Fatalf("refused removals removed entries: %d left, want 3", len(list))
	}

	got, err := c.RemoveCacheEntries(t.Context(), "", []string{k1, strings.TrimPrefix(k2, "sha256:")})
	if err != nil || got != (apiv1.CachePruned{Entries: 2, Bytes: int64(len("one") + len("two!"))}) {
		t.Errorf("removing two keys through the client = %+v, %v; want 2 entries and their bytes", got, err)
	}
	_, err = c.PruneCache(t.Context(), apiv1.CachePrune{OlderThan: "-1h", MaxSize: "0"})
	var fields []string
	for _, e := range apiv1.Errors(err) {
		fields = append(fields, string(e.Code)+" "+e.Field)
	}
	if diff := cmp.Diff([]string{"KLN-1009 olderThan", "KLN-1010 maxSize"}, fields); diff != "" {
		t.Errorf("pruning with bad values through the client (-want +got):\n%s", diff)
	}
	got, err = c.PruneCache(t.Context(), apiv1.CachePrune{All: true})
	if err != nil || got != (apiv1.CachePruned{Entries: 1, Bytes: int64(len("three"))}) {
		t.Errorf("pruning all through the client = %+v, %v; want %s's entry", got, err, k3)
	}
	if list, _ := c.CacheEntries(t.Context(), apiv1.CacheQuery{}); len(list) != 0 {
		t.Errorf("after pruning all the cache lists %d entries", len(list))
	}
}

func TestSubmitSendsTheCacheMode(t *testing.T) {
	t.Parallel()
	c, _, _ := newServer(t)
	wf := "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec:\n  tasks: [{name: t, command: [\"true\"]}]\n"
	run, err := c.Submit(t.Context(), apiv1.Submission{Files: []apiv1.SourceFile{{Name: "w.yaml", Data: []byte(wf)}}, Cache: apiv1.CacheOverwrite})
	if err != nil {
		t.Fatal(err)
	}
	if run.Cache != apiv1.CacheOverwrite {
		t.Errorf("the run's cache mode = %q, want overwrite as sent", run.Cache)
	}
	_, err = c.Submit(t.Context(), apiv1.Submission{Files: []apiv1.SourceFile{{Name: "w.yaml", Data: []byte(wf)}}, Cache: "sometimes"})
	if apiv1.CodeOf(err) != apiv1.CodeInvalidValue {
		t.Errorf("submitting cache mode sometimes = %v, want KLN-1012", err)
	}
}
