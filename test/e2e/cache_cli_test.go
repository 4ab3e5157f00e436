package e2e

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// cachedWorkflow's task make is cached: it counts its runs in count and
// writes a model (a file) and a tool (an executable in a directory).
func cachedWorkflow(count string) string {
	return `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: cached}
spec:
  tasks:
  - name: make
    cache: {version: "1"}
    command: [sh, -c, 'echo run >> ` + count + `; echo weights > {{outputs.dir}}/model.bin; mkdir -p {{outputs.dir}}/bin; printf "#!/bin/sh\necho tool\n" > {{outputs.dir}}/bin/tool; chmod +x {{outputs.dir}}/bin/tool; echo 0.5 > $KILN_OUTPUTS/loss']
    outputs:
      parameters: [{name: loss}]
      artifacts: [{name: model, path: model.bin}, {name: bin, path: bin}]
  - name: use
    dependsOn: [make]
    command: [sh, -c, 'test "$(cat {{tasks.make.outputs.artifacts.model}})" = weights && {{tasks.make.outputs.artifacts.bin}}/tool']
`
}

// cacheList is kiln cache ls -o json on home with env.
func cacheList(t *testing.T, env []string, home string, args ...string) []apiv1.CacheEntry {
	t.Helper()
	r := kilnWithEnv(t, env, home, append([]string{"cache", "ls", "-o", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("cache ls -o json = exit %d: %s", r.code, r.stderr)
	}
	var out []apiv1.CacheEntry
	if err := unmarshalList(r.stdout, "CacheEntryList", &out); err != nil {
		t.Fatalf("cache ls -o json: %v\n%s", err, r.stdout)
	}
	return out
}

func TestCacheCommandsOnAnEmptyHome(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	if r := kiln(t, home, "cache", "ls"); r.code != 0 || r.stdout != "the cache holds no results\n" {
		t.Errorf("cache ls on an empty home = exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if got := cacheList(t, nil, home); got == nil || len(got) != 0 {
		t.Errorf("cache ls -o json on an empty home = %#v, want []", got)
	}
	r := kiln(t, home, "cache", "rm", "0123456789ab")
	if r.code != 1 || !strings.Contains(r.stderr, "KLN-4025") || !strings.Contains(r.stderr, "0123456789ab") {
		t.Errorf("cache rm of an unknown key = exit %d %q; want KLN-4025 naming the key", r.code, r.stderr)
	}
	r = kiln(t, home, "cache", "prune", "--older-than", "soon", "--max-size", "lots")
	if r.code != 1 || !strings.Contains(r.stderr, "KLN-1009 --older-than") || !strings.Contains(r.stderr, "KLN-1010 --max-size") {
		t.Errorf("cache prune with bad values = exit %d %q; want KLN-1009 and KLN-1010 naming the flags", r.code, r.stderr)
	}
	r = kiln(t, home, "cache", "prune")
	if r.code != 0 || !strings.Contains(r.stdout, "expired results only") || !strings.Contains(r.stdout, "removed 0 cache entries, 0B freed") {
		t.Errorf("cache prune with no selector = exit %d %q %q; want it to say it removes only expired entries", r.code, r.stdout, r.stderr)
	}
	wf := writeFile(t, dir, "wf.yaml", cachedWorkflow(filepath.Join(dir, "count")))
	r = kiln(t, home, "run", "--cache", "bogus", wf)
	if r.code != 2 || !strings.Contains(r.stderr, "--cache") || !strings.Contains(r.stderr, "overwrite") {
		t.Errorf("run --cache bogus = exit %d %q; want a usage error listing the modes", r.code, r.stderr)
	}
	if r := kiln(t, home, "run", "--cache-max-size", "huge", wf); r.code != 2 || !strings.Contains(r.stderr, "--cache-max-size") {
		t.Errorf("run --cache-max-size huge = exit %d %q; want a usage error naming the flag", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "count")); err == nil {
		t.Errorf("a run refused for its flags ran its task")
	}
}

func TestCachedResultsAreListedReusedAndRemoved(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	count := filepath.Join(dir, "count")
	wf := writeFile(t, dir, "wf.yaml", cachedWorkflow(count))
	runs := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "run")
	}
	for i, mode := range []string{"on", "on", "off"} {
		if r := kiln(t, home, "run", "-q", "--cache", mode, wf); r.code != 0 {
			t.Fatalf("run %d (--cache %s) = exit %d %s %s", i+1, mode, r.code, r.stdout, r.stderr)
		}
	}
	if got := runs(); got != 2 {
		t.Errorf("make ran %d times in three runs, want 2: the second reuses the first's result, the third (off) runs", got)
	}
	list := cacheList(t, nil, home)
	if len(list) != 1 || list[0].Task != "make" || list[0].Workflow != "cached" || list[0].Version != "1" || list[0].Size == 0 {
		t.Fatalf("cache ls = %+v, want make's one result", list)
	}
	r := kiln(t, home, "cache", "ls", "--task", "make")
	short := strings.TrimPrefix(list[0].Key, "sha256:")[:12]
	if r.code != 0 || !strings.Contains(r.stdout, "KEY") || !strings.Contains(r.stdout, "LAST USED") || !strings.Contains(r.stdout, short) {
		t.Errorf("cache ls = exit %d %q; want a table with the key %s", r.code, r.stdout, short)
	}
	if got := cacheList(t, nil, home, "--task", "other"); len(got) != 0 {
		t.Errorf("cache ls --task other = %+v, want none", got)
	}

	r = kiln(t, home, "cache", "rm", short)
	if r.code != 0 || !strings.Contains(r.stdout, "removed 1 cache entry") {
		t.Errorf("cache rm %s = exit %d %q %q", short, r.code, r.stdout, r.stderr)
	}
	if got := cacheList(t, nil, home); len(got) != 0 {
		t.Errorf("after cache rm the cache lists %+v", got)
	}
	if r := kiln(t, home, "run", "-q", wf); r.code != 0 || runs() != 3 {
		t.Errorf("after its result was removed make ran %d times (exit %d), want 3", runs(), r.code)
	}
	r = kiln(t, home, "cache", "prune", "--all")
	if r.code != 0 || !strings.Contains(r.stdout, "removed 1 cache entry") {
		t.Errorf("cache prune --all = exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestCacheThroughAServer(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	other := newHome(t) // the client's own home stays empty: the server answers

	if r := kilnWithEnv(t, client, other, "cache", "ls"); r.code != 0 || r.stdout != "the cache holds no results\n" {
		t.Errorf("cache ls through the server = exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if got := cacheList(t, client, other, "--project", "default"); len(got) != 0 {
		t.Errorf("cache ls -o json through the server = %+v, want none", got)
	}
	r := kilnWithEnv(t, client, other, "cache", "rm", "0123456789ab")
	if r.code != 1 || !strings.Contains(r.stderr, "KLN-4025") {
		t.Errorf("cache rm of an unknown key through the server = exit %d %q; want KLN-4025", r.code, r.stderr)
	}
	r = kilnWithEnv(t, client, other, "cache", "prune", "--older-than", "soon")
	if r.code != 1 || !strings.Contains(r.stderr, "KLN-1009 --older-than") {
		t.Errorf("cache prune --older-than soon through the server = exit %d %q; want KLN-1009 naming the flag", r.code, r.stderr)
	}
	if r := kilnWithEnv(t, client, other, "cache", "prune", "--all"); r.code != 0 || !strings.Contains(r.stdout, "removed 0 cache entries") {
		t.Errorf("cache prune --all through the server = exit %d %q %q", r.code, r.stdout, r.stderr)
	}

	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil { // the server's tasks may run as the project's own account
		t.Fatal(err)
	}
	count := filepath.Join(dir, "count")
	wf := writeFile(t, dir, "wf.yaml", cachedWorkflow(count))
	for i, mode := range []string{"on", "on", "overwrite"} {
		if r := kilnWithEnv(t, client, other, "run", "-q", "--cache", mode, wf); r.code != 0 {
			t.Fatalf("run %d (--cache %s) through the server = exit %d %s %s", i+1, mode, r.code, r.stdout, r.stderr)
		}
	}
	if b, _ := os.ReadFile(count); strings.Count(string(b), "run") != 2 {
		t.Errorf("make ran %d times in three runs through the server, want 2: the second reuses, the third (overwrite) computes afresh", strings.Count(string(b), "run"))
	}
	list := cacheList(t, client, other)
	if len(list) != 1 || list[0].Task != "make" {
		t.Fatalf("cache ls through the server = %+v, want make's one result", list)
	}
	short := strings.TrimPrefix(list[0].Key, "sha256:")[:12]
	if r := kilnWithEnv(t, client, other, "cache", "rm", short); r.code != 0 || !strings.Contains(r.stdout, "removed 1 cache entry") {
		t.Errorf("cache rm %s through the server = exit %d %q %q", short, r.code, r.stdout, r.stderr)
	}

	req, _ := http.NewRequest("DELETE", base+"/api/v1/cache/sha256:0123456789abcdef", nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), `"code":"KLN-4025"`) {
		t.Errorf("DELETE of an unknown key = %d %s, want 404 with KLN-4025", resp.StatusCode, b)
	}
}
