package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Two kiln run in two terminals on one home, each told it may use one
// CPU, share the machine's pool: at most one of their one-CPU tasks runs
// at any time.
func TestTwoKilnRunsShareOneHomesPool(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	spec := "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: NAME}\nspec:\n  tasks:\n"
	for _, task := range []string{"a", "b", "c"} {
		spec += "  - {name: " + task + ", command: [sh, -c, 'echo start >> " + log + "; sleep 0.2; echo end >> " + log + "']}\n"
	}
	var wg sync.WaitGroup
	results := make([]result, 2)
	for i, name := range []string{"one", "two"} {
		wf := writeFile(t, dir, name+".yaml", strings.Replace(spec, "NAME", name, 1))
		wg.Go(func() { results[i] = kiln(t, home, "run", "--cpus", "1", wf) })
	}
	wg.Wait()
	for _, r := range results {
		if r.code != 0 {
			t.Fatalf("kiln run: %d %s", r.code, r.stderr)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	running, most := 0, 0
	for _, line := range strings.Fields(string(b)) {
		if line == "start" {
			running++
		} else {
			running--
		}
		most = max(most, running)
	}
	if most != 1 {
		t.Errorf("%d one-CPU tasks of two engines ran at once on a pool of one CPU, want 1", most)
	}
}
