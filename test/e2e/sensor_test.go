package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TestFileSensorWaitsForItsFile: a sensor task holds no room and waits,
// Running, until its file appears; the next task reads the path it
// found; a sensor whose file never comes fails at its timeout
// (KLN-3016), or is skipped with onTimeout: skip.
func TestFileSensorWaitsForItsFile(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	seen := filepath.Join(dir, "seen")
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: sensed}
spec:
  params: [{name: dir}]
  tasks:
  - name: data
    sensor: {file: {path: "{{params.dir}}/READY"}, poll: 100ms}
  - name: use
    dependsOn: [data]
    command: [sh, -c, 'echo "$0" > `+seen+`', '{{tasks.data.outputs.parameters.path}}']
  - name: never
    sensor: {file: {path: "{{params.dir}}/NEVER"}, poll: 100ms, timeout: 1s, onTimeout: skip}
`)
	cmd := startKiln(t, home, "run", "-q", "-p", "dir="+dir, wf)
	waitFor(t, "the sensor to wait", func() bool {
		list := runs(t, home)
		if len(list) != 1 {
			return false
		}
		n := nodeNamed(t, describe(t, home, list[0].ID), "data")
		return n.Phase == apiv1.PhaseRunning && strings.Contains(n.Message, "waiting for "+filepath.Join(dir, "READY"))
	})
	id := runs(t, home)[0].ID
	if got := readOrEmpty(seen); got != "" {
		t.Fatalf("use ran before the file was there: %q", got)
	}
	writeFile(t, dir, "READY", "")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the run: %v\n%s", err, kiln(t, home, "describe", "run", string(id)).stdout)
	}
	run := describe(t, home, id)
	data, never := nodeNamed(t, run, "data"), nodeNamed(t, run, "never")
	if got := strings.TrimSpace(readOrEmpty(seen)); got != filepath.Join(dir, "READY") || data.Kind != apiv1.NodeKindSensor || len(data.Attempts) != 0 {
		t.Errorf("use read %q from a %s node with %d attempts; want the path the sensor found, from a sensor with no attempt", got, data.Kind, len(data.Attempts))
	}
	if never.Phase != apiv1.PhaseSkipped || !strings.Contains(never.Message, "did not appear within") {
		t.Errorf("the sensor whose file never came is %s %q; want Skipped at its timeout", never.Phase, never.Message)
	}

	strict := writeFile(t, dir, "strict.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: strict}
spec:
  tasks:
  - name: data
    sensor: {file: {path: `+filepath.Join(dir, "NEVER")+`}, poll: 100ms, timeout: 1s}
`)
	if r := kilnBounded(t, home, "run", "-q", strict); r.code != 1 || !strings.Contains(r.stdout+r.stderr, "KLN-3016") {
		t.Errorf("a sensor past its timeout: %d %s%s; want the run Failed with KLN-3016", r.code, r.stdout, r.stderr)
	}
}
