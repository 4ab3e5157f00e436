package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact/artifacttest"
)

// TestS3ArtifactsStayInTheirProject serves artifacts stored in the real
// S3-compatible server to tokens of two projects: a token of project a
// gets nothing of project b's runs or cache entries, by ID, by key, by a
// key's prefix or by a path that climbs out of its own, and each answer
// is the one an unknown run, entry or artifact gets. (kiln hands out no
// presigned URLs: every byte goes through the server's checks.)
func TestS3ArtifactsStayInTheirProject(t *testing.T) {
	t.Parallel()
	home, base, admin := serveWithS3(t)
	bRun := postRunAs(t, base, admin, "b", artifactsWorkflow)
	waitServed(t, base, admin, bRun.ID, apiv1.PhaseSucceeded)
	aRun := postRunAs(t, base, admin, "a", strings.ReplaceAll(artifactsWorkflow, "weights", "aweights"))
	waitServed(t, base, admin, aRun.ID, apiv1.PhaseSucceeded)
	entries := cacheList(t, nil, home)
	keys := map[string]string{}
	for _, e := range entries {
		keys[e.Project] = strings.TrimPrefix(e.Key, "sha256:")
	}
	aKey, bKey := keys["a"], keys["b"]
	if aKey == "" || bKey == "" {
		t.Fatalf("no cache entry of project a or b among %+v", entries)
	}
	aEditor := strings.TrimSpace(kiln(t, home, "token", "create", "a-editor", "--role", "editor", "--project", "a").stdout)
	bEditor := strings.TrimSpace(kiln(t, home, "token", "create", "b-editor", "--role", "editor", "--project", "b").stdout)

	if code, body := apiGet(t, base, bEditor, "/api/v1/runs/"+string(bRun.ID)+"/artifacts/make/model"); code != http.StatusOK || body != "weights\n" {
		t.Fatalf("project b's own model: %d %q", code, body)
	}
	if code, body := apiGet(t, base, bEditor, "/api/v1/cache/"+bKey[:12]+"/artifacts/model"); code != http.StatusOK || body != "weights\n" {
		t.Fatalf("project b's own cache entry: %d %q", code, body)
	}
	cases := []struct {
		what, path string
		status     int
		code       apiv1.Code
	}{
		{"b's run's artifacts", "/api/v1/runs/" + string(bRun.ID) + "/artifacts", 404, apiv1.CodeRunNotFound},
		{"b's model", "/api/v1/runs/" + string(bRun.ID) + "/artifacts/make/model", 404, apiv1.CodeRunNotFound},
		{"b's cache entry by key", "/api/v1/cache/" + bKey + "/artifacts/model", 404, apiv1.CodeNoCacheEntry},
		{"b's cache entry by a prefix", "/api/v1/cache/" + bKey[:8] + "/artifacts/model", 404, apiv1.CodeNoCacheEntry},
		{"b's cache entry naming b", "/api/v1/cache/" + bKey + "/artifacts/model?project=b", 403, apiv1.CodeForbidden},
		{"a climb from a's node to b's run", "/api/v1/runs/" + string(aRun.ID) + "/artifacts/" + url.PathEscape("../../"+string(bRun.ID)+"/make") + "/model", 404, apiv1.CodeNoArtifact},
		{"a climb in the artifact's name", "/api/v1/runs/" + string(aRun.ID) + "/artifacts/make/" + url.PathEscape("../../../"+string(bRun.ID)+"/make/model"), 404, apiv1.CodeNoArtifact},
		{"a climb in a cache key", "/api/v1/cache/" + url.PathEscape("../"+bKey) + "/artifacts/model", 400, apiv1.CodeInvalidValue},
		{"a climb from a's cache entry", "/api/v1/cache/" + aKey[:12] + "/artifacts/" + url.PathEscape("../"+bKey+"/model"), 404, apiv1.CodeNoArtifact},
	}
	for _, tc := range cases {
		code, body := apiGet(t, base, aEditor, tc.path)
		if code != tc.status || !strings.Contains(body, string(tc.code)) || strings.Contains(body, "weights") {
			t.Errorf("%s as project a's editor: %d %s, want %d with %s and nothing of b's", tc.what, code, body, tc.status, tc.code)
		}
	}
	remote := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+aEditor)
	if r := kilnWithEnv(t, remote, newHome(t), "artifacts", "get", string(bRun.ID), "make/model"); r.code == 0 || strings.Contains(r.stdout, "weights") {
		t.Errorf("kiln artifacts get of b's model as project a: exit %d %q", r.code, r.stdout)
	}
}

// serveWithS3 starts kiln serve (no isolation) on a new home whose
// artifacts go to the real S3-compatible server of hack/s3-up.sh, its keys
// a kiln secret; it returns the home, the server's address and its admin token.
func serveWithS3(t *testing.T) (home, base, admin string) {
	t.Helper()
	c := artifacttest.S3Config(t)
	home = newHome(t)
	writeFile(t, home, "config.yaml", fmt.Sprintf("artifacts:\n  s3: {endpoint: %q, bucket: %s, prefix: %q, region: us-east-1, secret: s3-keys}\n",
		c.Endpoint, c.Bucket, c.Prefix))
	if r := kilnStdin(t, nil, home, c.AccessKey+":"+c.SecretKey, "secret", "set", "s3-keys"); r.code != 0 {
		t.Fatalf("secret set: %s %s", r.stdout, r.stderr)
	}
	base, admin, _ = startServeAs(t, home, nil, nil, "--isolation", "none")
	return home, base, admin
}
