package e2e

import (
	"bufio"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the test drops a table of the store

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store/pgtest"
)

// TestASlowBodyGets408WithEqualTimeouts: with the read and write timeouts
// equal, as they are by default, a body that trickles in still gets the
// 408 the README promises, with its code, on a plain and a multipart
// submission alike.
func TestASlowBodyGets408WithEqualTimeouts(t *testing.T) {
	t.Parallel()
	base, admin, _ := startServeAs(t, newHome(t), nil, nil, "--isolation", "none", "--read-timeout", "2s", "--write-timeout", "2s")
	for what, head := range map[string]string{
		"yaml":      "Content-Type: application/yaml\r\n",
		"multipart": "Content-Type: multipart/form-data; boundary=XX\r\n",
	} {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		first := "apiVersion: "
		if what == "multipart" {
			first = "--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.yaml\"\r\n\r\napiVersion: "
		}
		fmt.Fprintf(c, "POST /api/v1/runs HTTP/1.1\r\nHost: kiln\r\nAuthorization: Bearer %s\r\n%sContent-Length: 100000\r\n\r\n%s", admin, head, first)
		_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // a bound, not a timing
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Errorf("a %s body that never comes: %v, want a 408", what, err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "KLN-4006") {
			t.Errorf("a %s body that never comes: %d %s, want 408 with KLN-4006", what, resp.StatusCode, b)
		}
	}
}

// TestEmptyDocumentsCountTowardsTheLimit: a file of 2,000 empty documents
// and one workflow is over the 1,000-document limit, through the API and
// the CLI alike.
func TestEmptyDocumentsCountTowardsTheLimit(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("---\n", 2000) + "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec:\n  tasks: [{name: a, command: [echo, hi]}]\n"
	base, admin, _ := startServeAs(t, newHome(t), nil, nil, "--isolation", "none")
	code, got := apiPost(t, base, admin, "/api/v1/runs", body)
	if code != http.StatusBadRequest || !strings.Contains(got, "KLN-1023") || !strings.Contains(got, "more than 1000 documents") {
		t.Errorf("POST of 2,000 empty documents: %d %s, want 400 with KLN-1023", code, got)
	}
	file := writeFile(t, t.TempDir(), "empty.yaml", body)
	if r := kiln(t, newHome(t), "validate", file); r.code == 0 || !strings.Contains(r.stderr, "KLN-1023") || !strings.Contains(r.stderr, "empty.yaml") {
		t.Errorf("kiln validate of 2,000 empty documents: %d %s, want KLN-1023 naming the file", r.code, r.stderr)
	}
	var list apiv1.RunList
	if code := apiGetJSON(t, base, admin, "/api/v1/runs", &list); code != http.StatusOK || len(list.Items) != 0 {
		t.Errorf("GET runs after the refused submission: %d, %d runs", code, len(list.Items))
	}
}

// TestAConfigFileOthersMayReadHoldsNoToken: as ssh refuses a private key
// others may read, kiln refuses a configuration file holding a token
// with group or other read access, naming it and saying how to mend it.
func TestAConfigFileOthersMayReadHoldsNoToken(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	path := writeFile(t, home, "config.yaml", "contexts:\n- {name: prod, server: 'http://127.0.0.1:9', token: kln_secret_in_file}\ncurrent-context: prod\n")
	for _, mode := range []os.FileMode{0o644, 0o640} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		r := kiln(t, home, "get", "runs")
		if r.code == 0 || !strings.Contains(r.stderr, "KLN-4056") || !strings.Contains(r.stderr, path) || !strings.Contains(r.stderr, "chmod 600") {
			t.Errorf("kiln get runs with a token in a %04o config: %d %s, want KLN-4056 naming the file", mode, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "kln_secret_in_file") {
			t.Errorf("the refusal repeats the token: %s", r.stderr)
		}
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := kiln(t, home, "config", "get-contexts"); r.code != 0 || !strings.Contains(r.stdout, "prod") {
		t.Errorf("kiln config get-contexts of a 0600 file: %d %s%s", r.code, r.stdout, r.stderr)
	}
}

// TestADroppedStoreTableIsSaid: a table of kiln's dropped by hand is
// KLN-5002, the damaged store, with its hint, on SQLite and PostgreSQL,
// never KLN-5001's "check that KILN_HOME is writable".
func TestADroppedStoreTableIsSaid(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		home := newHome(t)
		if r := kiln(t, home, "get", "runs"); r.code != 0 {
			t.Fatalf("kiln get runs on a new home: %s", r.stderr)
		}
		db, err := sql.Open("sqlite", filepath.Join(home, "kiln.db"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("DROP TABLE runs"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		r := kiln(t, home, "get", "runs")
		wantDamaged(t, r, "no such table: runs", "restore a backup")
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dsn := pgtest.Start(t).NewDatabase(t)
		keys := t.TempDir()
		env := append(os.Environ(), "KILN_STORE="+dsn, "KILN_SECRET_KEY_FILE="+filepath.Join(keys, "secret.key"))
		home := newHome(t)
		if r := kilnWithEnv(t, env, home, "get", "runs"); r.code != 0 {
			t.Fatalf("kiln get runs on a new database: %s", r.stderr)
		}
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("DROP TABLE runs CASCADE"); err != nil {
			t.Fatal(err)
		}
		r := kilnWithEnv(t, env, home, "get", "runs")
		wantDamaged(t, r, `relation "runs" does not exist`, "new, empty database")
	})
}

func wantDamaged(t *testing.T, r result, says, hint string) {
	t.Helper()
	if r.code == 0 || !strings.Contains(r.stderr, "KLN-5002") || !strings.Contains(r.stderr, says) || !strings.Contains(r.stderr, hint) {
		t.Errorf("kiln get runs on a store without its runs table: %d %s, want KLN-5002 saying %q with the hint %q", r.code, r.stderr, says, hint)
	}
}
