// Package e2e builds the kiln binary and drives it as a user would.
package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/local"
)

var kilnBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kiln-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kilnBin = filepath.Join(dir, "kiln")
	// Compiled as make release compiles it (no cgo, -trimpath): the
	// static binary users run is the one the tests run, and the release
	// build of TestReleaseIsStatic only links again.
	build := exec.Command("go", "build", "-trimpath", "-o", kilnBin, "kiln.dev/kiln/cmd/kiln")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building kiln:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// home is a kiln home whose supervisor is stopped when the test ends.
func newHome(t *testing.T) string {
	t.Helper()
	// Beneath the test's temporary directories, as tests and servers
	// expect (they open its parents to the tasks' project accounts), but
	// removed by removeHome first.
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeHome(t, home) })
	return home
}

// removeHome stops home's supervisors and removes home. A supervisor a
// stopped server was still starting holds no PID file yet and writes its
// first files after the server is gone, so supervisors are found by
// their command line too, and removing is tried again, stopping any
// supervisor found, for up to 10 seconds.
func removeHome(t *testing.T, home string) {
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); <-time.After(100 * time.Millisecond) {
		if stopSupervisor(home) {
			continue // one was running: look again before removing
		}
		if err = os.RemoveAll(home); err == nil && len(supervisorsOf(home)) == 0 {
			return
		}
	}
	if err == nil {
		err = fmt.Errorf("supervisors %v of it are still running", supervisorsOf(home))
	}
	t.Errorf("removing the test's kiln home: %v", err)
}

// stopSupervisor kills home's supervisors and waits, up to 10 seconds,
// until they are gone, so that they write nothing while the test removes
// home. It reports whether it found any.
func stopSupervisor(home string) bool {
	pids := supervisorsOf(home)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, pid := range pids {
		for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil && time.Now().Before(deadline); {
			<-time.After(5 * time.Millisecond)
		}
	}
	return len(pids) > 0
}

// supervisorsOf returns the PIDs of home's supervisors: the one in its
// lock file and every process whose command line is "supervise --home
// home", which covers one that has not written its PID yet.
func supervisorsOf(home string) []int {
	var pids []int
	if pid := local.SupervisorPID(home); pid > 0 {
		pids = append(pids, pid)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte("\x00supervise\x00--home\x00"+home+"\x00")) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil && !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

type result struct {
	stdout, stderr string
	code           int
}

func kiln(t *testing.T, home string, args ...string) result {
	t.Helper()
	return kilnIn(t, "", nil, append([]string{"--home", home}, args...)...)
}

// kilnWithEnv runs kiln on home with the environment env.
func kilnWithEnv(t *testing.T, env []string, home string, args ...string) result {
	t.Helper()
	return kilnIn(t, "", env, append([]string{"--home", home}, args...)...)
}

// kilnIn runs kiln in directory dir ("": this one) with env (nil: this
// process's).
func kilnIn(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(kilnBin, args...)
	cmd.Dir, cmd.Env = dir, env
	return runKiln(t, cmd, args)
}

// runKiln runs cmd, a kiln with args, to its end and returns what it
// printed and its exit code.
func runKiln(t *testing.T, cmd *exec.Cmd, args []string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running kiln %v: %v", args, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runs(t *testing.T, home string) []apiv1.Run {
	t.Helper()
	r := kiln(t, home, "get", "runs", "-o", "json")
	if r.code != 0 {
		t.Fatalf("get runs: %s", r.stderr)
	}
	var out []apiv1.Run
	if err := unmarshalList(r.stdout, "RunList", &out); err != nil {
		t.Fatalf("get runs -o json: %v\n%s", err, r.stdout)
	}
	return out
}

// unmarshalList reads what kiln prints for a list with -o json: a
// kiln.dev/v1alpha1 document of kind, whose items it decodes into items.
func unmarshalList(text, kind string, items any) error {
	var doc struct {
		APIVersion string          `json:"apiVersion"`
		Kind       string          `json:"kind"`
		Items      json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return err
	}
	if doc.APIVersion != apiv1.APIVersion || doc.Kind != kind || doc.Items == nil {
		return fmt.Errorf("the list is %s %s with items %s; want %s %s", doc.APIVersion, doc.Kind, doc.Items, apiv1.APIVersion, kind)
	}
	return json.Unmarshal(doc.Items, items)
}

func describe(t *testing.T, home string, id apiv1.RunID) apiv1.Run {
	t.Helper()
	r := kiln(t, home, "describe", "run", string(id), "-o", "json")
	if r.code != 0 {
		t.Fatalf("describe: %s", r.stderr)
	}
	var out apiv1.Run
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-time.After(10 * time.Millisecond)
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// startKiln starts kiln on home in the background; the caller waits on it.
func startKiln(t *testing.T, home string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(kilnBin, append([]string{"--home", home}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}
