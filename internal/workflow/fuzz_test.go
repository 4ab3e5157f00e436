package workflow

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// FuzzLoad reads, decodes and validates arbitrary bytes as kiln run and
// the server do. It must never panic nor hang, and every error must be a
// coded *apiv1.Error. The hostile suite's cases and the examples seed it.
func FuzzLoad(f *testing.F) {
	for _, pattern := range []string{"../../test/hostile/testdata/*.yaml", "../../examples/*.yaml", "../../examples/*/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(header + "spec: {tasks: [{name: a, command: [x], resources: {cpu: 1, memory: 1Gi}}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := LoadSubmission(&apiv1.Submission{Files: []apiv1.SourceFile{{Name: "fuzz.yaml", Data: data}}}, nil)
		if err == nil {
			if l == nil || l.Plan == nil {
				t.Fatalf("LoadSubmission returned neither a plan nor an error")
			}
			checkPlan(t, l.Plan)
			return
		}
		for _, e := range leafErrors(err) {
			var coded *apiv1.Error
			if !errors.As(e, &coded) || coded.Code == "" || coded.Message == "" {
				t.Errorf("error %q (%T) is not a coded *apiv1.Error", e, e)
			}
		}
	})
}

// checkPlan checks that an accepted plan's numbers lie within bounds.
func checkPlan(t *testing.T, p *Plan) {
	t.Helper()
	for i, task := range p.Tasks {
		r := task.Request
		if r.MilliCPU < 0 || r.Memory < 0 || r.GPU < 0 || task.Timeout < 0 || task.AdmissionTimeout < 0 || task.Retry.Limit < 0 {
			t.Errorf("task %d was accepted with a negative number: %+v", i, task)
		}
		if task.Retry.Delay(task.Retry.Limit+1) < 0 {
			t.Errorf("task %d's retry delay overflowed", i)
		}
	}
}

// leafErrors returns the errors err joins, each one that is not itself a join.
func leafErrors(err error) []error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range joined.Unwrap() {
			out = append(out, leafErrors(e)...)
		}
		return out
	}
	return []error{err}
}
