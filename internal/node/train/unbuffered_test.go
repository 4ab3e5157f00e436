package train_test

import (
	"slices"
	"strings"
	"testing"

	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node/nodetest"
	"kiln.dev/kiln/internal/node/train"
)

// Every process of every framework gets PYTHONUNBUFFERED=1, once, unless
// the trainer's env sets it: then the user's value is the only one.
func TestTrainersRunUnbuffered(t *testing.T) {
	t.Parallel()
	for _, rt := range []string{"torch-distributed", "mpi", "xgboost", "tensorflow", "jax", "plain"} {
		for user, want := range map[string]string{"": "PYTHONUNBUFFERED=1", "0": "PYTHONUNBUFFERED=0"} {
			t.Run(rt+"/"+want, func(t *testing.T) {
				t.Parallel()
				env := ""
				if user != "" {
					env = ", env: [{name: PYTHONUNBUFFERED, value: '" + user + "'}]"
				}
				tk := nodetest.Compile(t, "spec:\n  tasks:\n  - name: job\n    train: {runtime: "+rt+", numNodes: 2, command: [python3, t.py]"+env+"}\n")
				h := train.New()
				spec := &job.Spec{}
				if err := h.Build(t.Context(), nodetest.Attempt(h, tk, 1, nil), spec); err != nil {
					t.Fatal(err)
				}
				for _, p := range spec.Processes {
					got := slices.DeleteFunc(slices.Clone(p.Env), func(kv string) bool { return !strings.HasPrefix(kv, "PYTHONUNBUFFERED=") })
					if !slices.Equal(got, []string{want}) {
						t.Errorf("process %s has %v, want only %s", p.Name, got, want)
					}
				}
			})
		}
	}
}
