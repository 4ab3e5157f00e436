package sensor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/node/nodetest"
	"kiln.dev/kiln/internal/node/sensor"
	"kiln.dev/kiln/internal/workflow"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// sensorTask compiles a sensor task whose sensor is s, in a workflow with
// the param dir.
func sensorTask(t *testing.T, s string) *workflow.Task {
	t.Helper()
	return nodetest.Compile(t, "spec:\n  params: [{name: dir}]\n  tasks:\n  - name: s\n    sensor: "+s+"\n")
}

// TestSensorWaitsForAFile: the sensor looks at once, then every poll (or
// at its timeout, if that comes first), succeeds with the path as its
// output once the file is there, and fails or is skipped past its
// timeout as onTimeout says.
func TestSensorWaitsForAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := sensor.New()
	in := &nodetest.Inputs{Params: map[string]string{"dir": dir}}
	task := sensorTask(t, `{file: {path: "{{params.dir}}/READY"}, poll: 10s, timeout: 25s}`)
	st, err := h.Wait(t.Context(), task, in, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "READY")
	if st.Kind != sensor.KindFile || st.Message != want || !st.NextLook.Equal(t0) || !st.WakeAt.Equal(t0.Add(25*time.Second)) || h.TakesInput(st) {
		t.Fatalf("Wait = %+v; want the file's path, to look at once, the timeout as its wake time, and no input taken", st)
	}
	if _, _, done := h.Decide(task, st, nil, t0); done || !st.NextLook.Equal(t0.Add(10*time.Second)) {
		t.Errorf("no file yet: done %v, next look %v; want to look again after the poll", done, st.NextLook)
	}
	if _, _, done := h.Decide(task, st, nil, t0.Add(20*time.Second)); done || !st.NextLook.Equal(t0.Add(25*time.Second)) {
		t.Errorf("near the timeout: done %v, next look %v; want to look again at the timeout", done, st.NextLook)
	}
	if err := os.WriteFile(want, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	v, skip, done := h.Decide(task, st, nil, t0.Add(21*time.Second))
	if !done || skip || v.Phase != apiv1.PhaseSucceeded || v.Outputs["path"] != want || st.Decision != "found" || h.Describe(st) != "found "+want {
		t.Errorf("with the file: %+v, skip %v, done %v, %q; want Succeeded with its path", v, skip, done, h.Describe(st))
	}

	for onTimeout, wantSkip := range map[string]bool{"fail": false, "skip": true} {
		task := sensorTask(t, `{file: {path: /nonexistent/kiln-sensor-test}, timeout: 1m, onTimeout: `+onTimeout+`}`)
		st, _ := h.Wait(t.Context(), task, in, t0)
		v, skip, done := h.Decide(task, st, nil, t0.Add(time.Minute))
		failed := v.Phase == apiv1.PhaseFailed && v.Code == apiv1.CodeGateTimeout && v.Permanent
		if !done || skip != wantSkip || failed == wantSkip || !strings.Contains(v.Message, "did not appear within") {
			t.Errorf("onTimeout %s: %+v, skip %v, done %v", onTimeout, v, skip, done)
		}
	}
}

func TestSensorTakesNoInputAndWantsAnAbsolutePath(t *testing.T) {
	t.Parallel()
	h := sensor.New()
	if err := h.Accepts(&apiv1.GateStatus{Kind: sensor.KindFile}, apiv1.GateInput{}); apiv1.CodeOf(err) != apiv1.CodeNotWaiting {
		t.Errorf("Accepts = %v, want KLN-4014", err)
	}
	task := sensorTask(t, `{file: {path: "{{params.dir}}/x"}}`)
	if _, err := h.Wait(t.Context(), task, &nodetest.Inputs{Params: map[string]string{"dir": "relative"}}, t0); apiv1.CodeOf(err) != apiv1.CodeInvalidValue {
		t.Errorf("a relative path after expansion: %v, want KLN-1xxx invalid value", err)
	}
}
