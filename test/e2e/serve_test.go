package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestServeWithTokens(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	serve := exec.Command(kilnBin, "--home", home, "serve", "--addr", "127.0.0.1:0")
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	var base string
	for lines.Scan() {
		if addr, ok := strings.CutPrefix(lines.Text(), "kiln serving on "); ok {
			base = addr
			break
		}
	}
	if base == "" {
		t.Fatal("kiln serve never said where it listens")
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	tokenFile := filepath.Join(home, "admin.token")
	fi, err := os.Stat(tokenFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin.token: %v, mode %v; want it with mode 0600", err, fi.Mode())
	}
	raw, _ := os.ReadFile(tokenFile)
	admin := strings.TrimSpace(string(raw))

	call := func(method, path, token, body string) (int, []byte) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	code, b := call("POST", "/api/v1/runs", admin, "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: served}\nspec: {tasks: [{name: t, command: ['true']}]}\n")
	if code != http.StatusCreated {
		t.Fatalf("submit: %d %s", code, b)
	}
	var run apiv1.Run
	_ = json.Unmarshal(b, &run)
	waitFor(t, "the served run to succeed", func() bool {
		_, b := call("GET", "/api/v1/runs/"+string(run.ID), admin, "")
		var got apiv1.Run
		return json.Unmarshal(b, &got) == nil && got.Status.Phase == apiv1.PhaseSucceeded
	})

	created := kiln(t, home, "token", "create", "reader", "--role", "viewer", "--project", "default")
	viewer := strings.TrimSpace(created.stdout)
	if code, _ := call("GET", "/api/v1/runs", viewer, ""); code != http.StatusOK {
		t.Errorf("viewer list = %d, want 200", code)
	}
	if code, _ := call("POST", "/api/v1/runs/"+string(run.ID)+"/cancel", viewer, ""); code != http.StatusForbidden {
		t.Errorf("viewer cancel = %d, want 403", code)
	}
	list := kiln(t, home, "token", "list")
	if strings.Contains(list.stdout, viewer) || strings.Contains(list.stdout, admin) {
		t.Error("kiln token list shows token values")
	}
	id := strings.Fields(strings.Split(list.stdout, "\n")[2])[0] // header, admin, reader
	kiln(t, home, "token", "revoke", id)
	if code, _ := call("GET", "/api/v1/runs", viewer, ""); code != http.StatusUnauthorized {
		t.Errorf("revoked token = %d, want 401", code)
	}

	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serve.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("kiln serve after SIGTERM: %v, want a clean exit", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("kiln serve did not stop on SIGTERM")
	}
}
