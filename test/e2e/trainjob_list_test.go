package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestGetTrainJobsShowsAQueuedGang: a TrainJob whose gang waits for room
// is listed Queued with the reason, not Running, until it starts.
func TestGetTrainJobsShowsAQueuedGang(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	release := filepath.Join(dir, "release")
	job := func(name string) string {
		return writeFile(t, dir, name+".yaml", fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: %s}
spec:
  runtimeRef: {name: plain}
  trainer:
    numNodes: 1
    resourcesPerNode: {cpu: 1}
    command: [sh, -c, 'until test -e %s; do sleep 0.05; done']
`, name, release))
	}
	hog := startKiln(t, home, "run", "-q", "--cpus", "1", job("hog"))
	waitFor(t, "the hog to run", func() bool { return strings.Contains(kiln(t, home, "get", "trainjobs").stdout, "Running") })
	waiter := startKiln(t, home, "run", "-q", "--cpus", "1", job("waiter"))
	line := func() string {
		for _, l := range strings.Split(kiln(t, home, "get", "trainjobs").stdout, "\n") {
			if strings.HasPrefix(l, "waiter ") {
				return l
			}
		}
		return ""
	}
	waitFor(t, "the waiter to be listed Queued", func() bool { return strings.Contains(line(), "Queued") })
	if l := line(); !strings.Contains(l, "waiting for resources") || strings.Contains(l, "Running") {
		t.Errorf("the queued job is listed as %q; want Queued with why", l)
	}
	writeFile(t, dir, "release", "")
	if err := hog.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := waiter.Wait(); err != nil {
		t.Fatal(err)
	}
	if l := line(); !strings.Contains(l, "Complete") {
		t.Errorf("after the run the job is listed as %q, want Complete", l)
	}
}
