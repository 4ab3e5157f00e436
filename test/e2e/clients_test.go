package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// oapiCodegen is the Go client generator the test runs, pinned.
const oapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"

// clientTools is test/clients: the pinned npm tools (make clients
// installs them) and the clients' sources.
var clientTools, _ = filepath.Abs("../clients")

// needNode skips the test where node or the npm tools of test/clients are
// missing, or fails it when KILN_REQUIRE_NODE=1 (as CI sets).
func needNode(t *testing.T) {
	t.Helper()
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	}
	for _, tool := range []string{"redocly", "openapi-typescript", "tsc"} {
		if _, err := os.Stat(filepath.Join(clientTools, "node_modules", ".bin", tool)); err != nil && missing == "" {
			missing = tool + " is not in test/clients/node_modules"
		}
	}
	if missing == "" {
		return
	}
	if os.Getenv("KILN_REQUIRE_NODE") == "1" {
		t.Fatalf("KILN_REQUIRE_NODE=1 but %s: run make clients", missing)
	}
	t.Skipf("%s: make clients installs node and the pinned tools (set KILN_REQUIRE_NODE=1 to fail instead)", missing)
}

// servedDocument starts kiln serve and writes the OpenAPI document it
// serves into dir; it returns the server's URL and admin token.
func servedDocument(t *testing.T, dir string) (string, string, string) {
	t.Helper()
	base, token, _ := startServe(t, newHome(t))
	code, doc := apiGet(t, base, "", "/api/v1/openapi.json")
	if code != 200 {
		t.Fatalf("GET /api/v1/openapi.json: %d %s", code, doc)
	}
	path := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return base, token, path
}

// tool runs a command in dir and returns its stdout, failing the test
// with its output if it fails.
func tool(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s\n%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// lintProblems runs the pinned redocly lint on doc, with the strict
// form of its recommended rules (each warning an error), and returns the
// errors it reports, with where each is.
func lintProblems(t *testing.T, doc string) []string {
	t.Helper()
	cmd := exec.Command(filepath.Join(clientTools, "node_modules", ".bin", "redocly"), "lint", "--extends=recommended-strict", "--format=json", doc)
	cmd.Dir = clientTools
	out, _ := cmd.Output() // it exits 1 when it finds errors
	var report struct {
		Problems []struct {
			RuleID, Severity, Message string
			Location                  []struct{ Pointer string }
		}
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("redocly lint printed no report: %v\n%s", err, out)
	}
	var errs []string
	for _, p := range report.Problems {
		if p.Severity == "error" {
			errs = append(errs, p.RuleID+": "+p.Message+" at "+p.Location[0].Pointer)
		}
	}
	return errs
}

// TestOpenAPIDocumentLintsClean lints the document a server serves with
// the pinned redocly, as a client's author would before generating from
// it, and a copy broken on purpose, to know the lint can fail.
func TestOpenAPIDocumentLintsClean(t *testing.T) {
	needNode(t)
	t.Parallel()
	dir := t.TempDir()
	_, _, doc := servedDocument(t, dir)
	if errs := lintProblems(t, doc); len(errs) > 0 {
		t.Errorf("redocly lint found %d errors in the served document:\n%s", len(errs), strings.Join(errs, "\n"))
	}
	raw, _ := os.ReadFile(doc)
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	delete(v, "servers")
	broken, _ := json.Marshal(v)
	brokenPath := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(brokenPath, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	if errs := lintProblems(t, brokenPath); !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, "no-empty-servers") }) {
		t.Errorf("redocly lint of a document without servers found %q, want no-empty-servers", errs)
	}
}

// clientLine is one line a generated client's program prints: a run it
// submitted and read back until it ended, or the refusal of a bad one.
type clientLine struct {
	Kind, ID, Name, Phase string
	Status                int
	Code                  string
}

// TestGeneratedClients generates a TypeScript client (openapi-typescript
// and openapi-fetch, type-checked by tsc) and a Go client (oapi-codegen)
// from the document a real server serves, and with each submits a
// Workflow and a TrainJob as typed values, reads the runs back until they
// end, and submits a Workflow the server refuses. What each client saw is
// checked against what the server says.
func TestGeneratedClients(t *testing.T) {
	needNode(t)
	t.Parallel()
	base, token, doc := servedDocument(t, t.TempDir())
	env := []string{"KILN_TOKEN=" + token}
	t.Run("typescript", func(t *testing.T) {
		t.Parallel()
		dir := copyDir(t, filepath.Join(clientTools, "ts"))
		if err := os.Symlink(filepath.Join(clientTools, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, "package.json", `{"private": true, "type": "module"}`)
		tool(t, dir, nil, filepath.Join(dir, "node_modules", ".bin", "openapi-typescript"), doc, "-o", "api.d.ts")
		tool(t, dir, nil, filepath.Join(dir, "node_modules", ".bin", "tsc"), "-p", ".")
		out := tool(t, dir, env, "node", filepath.Join("out", "submit.js"), base)
		checkClient(t, base, token, "ts-client", out)
	})
	t.Run("go", func(t *testing.T) {
		t.Parallel()
		dir := copyDir(t, filepath.Join(clientTools, "go"))
		tool(t, dir, nil, "go", "run", oapiCodegen, "-generate", "types,client", "-package", "api", "-o", filepath.Join("api", "api.gen.go"), doc)
		tool(t, dir, nil, "go", "vet", ".")
		out := tool(t, dir, env, "go", "run", ".", "-server", base)
		checkClient(t, base, token, "go-client", out)
	})
}

// checkClient checks what a client printed: its Workflow and TrainJob
// (named prefix-wf and prefix-tj) succeeded, as the server says too, and
// the server's refusal of its bad Workflow came back as a coded error.
func checkClient(t *testing.T, base, token, prefix, out string) {
	t.Helper()
	seen := map[string]clientLine{}
	lines := bufio.NewScanner(strings.NewReader(out))
	for lines.Scan() {
		var l clientLine
		if err := json.Unmarshal(lines.Bytes(), &l); err != nil {
			t.Fatalf("the client printed %q: %v", lines.Text(), err)
		}
		seen[l.Kind] = l
	}
	for kind, name := range map[string]string{apiv1.KindWorkflow: prefix + "-wf", apiv1.KindTrainJob: prefix + "-tj"} {
		l, ok := seen[kind]
		if !ok {
			t.Errorf("the client printed no %s run:\n%s", kind, out)
			continue
		}
		if l.Name != name || l.Phase != string(apiv1.PhaseSucceeded) {
			t.Errorf("the client read %s run %s as %s %s, want %s Succeeded", kind, l.ID, l.Name, l.Phase, name)
		}
		run, code := apiRun(t, base, token, apiv1.RunID(l.ID))
		if code != 200 || run.Kind != kind || run.Name != name || run.Status.Phase != apiv1.PhaseSucceeded {
			t.Errorf("the server has run %s as %d %s %s %s, want the client's %s %s Succeeded", l.ID, code, run.Kind, run.Name, run.Status.Phase, kind, name)
		}
	}
	refused := seen["refused"]
	known := slices.ContainsFunc(apiv1.CodeInfos(), func(c apiv1.CodeInfo) bool { return string(c.Code) == refused.Code })
	if refused.Status != 400 || !known {
		t.Errorf("the client read the refusal of a workflow without tasks as %d %q, want 400 with a known code", refused.Status, refused.Code)
	}
}

// copyDir copies the files of dir (not its subdirectories) into a new
// temporary directory and returns it.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, out, e.Name(), string(b))
	}
	return out
}
