package workflow

import (
	"path/filepath"
	"slices"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

const secureSumDir = "../../examples/federated"

// TestFederatedExamplesDeriveTheirParts validates the federated examples
// and derives each party's part as the party will: one share each, with
// the secret only where perRole gives it. Their programs run for real,
// across three servers, in test/e2e.
func TestFederatedExamplesDeriveTheirParts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file    string
		shares  int
		secrets map[string]bool // role → reads the secret
	}{
		{"secure-sum.yaml", 3, map[string]bool{"guest": true, "host": true, "arbiter": false}},
		{"fedavg.yaml", 3, map[string]bool{"holder": false, "aggregator": false}},
	} {
		docs, err := ReadFiles([]string{filepath.Join(secureSumDir, c.file)})
		if err != nil {
			t.Fatal(err)
		}
		checked, err := CheckDocuments(docs, nil)
		if err != nil {
			t.Fatalf("%s does not validate: %v", c.file, err)
		}
		task := checked[0].Plan.Tasks[0]
		if task.Federated == nil || len(task.Federated.Shares) != c.shares {
			t.Fatalf("%s: task %s compiled to %+v, want %d shares", c.file, task.Spec.Name, task.Federated, c.shares)
		}
		for _, r := range task.Federated.Shares {
			part, refs, err := PartOf(checked[0].Plan.Workflow, r.Party)
			if err != nil || len(part.Spec.Tasks) != 1 || len(refs) != 1 {
				t.Fatalf("%s: %s's part = %+v, %v", c.file, r.Party, part, err)
			}
			pt := part.Spec.Tasks[0]
			reads := slices.ContainsFunc(pt.Env, func(e apiv1.EnvVar) bool { return e.ValueFrom != nil })
			if reads != c.secrets[r.Role] {
				t.Errorf("%s: %s's share (%s) reads a secret: %t, want %t", c.file, r.Party, r.Role, reads, c.secrets[r.Role])
			}
			if !slices.ContainsFunc(pt.Env, func(e apiv1.EnvVar) bool { return e.Name == "PYTHONPATH" }) {
				t.Errorf("%s: %s's share has no PYTHONPATH for the kiln package", c.file, r.Party)
			}
		}
	}
}
