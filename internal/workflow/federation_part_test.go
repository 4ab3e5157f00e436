package workflow

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// partSpec has a task bob fills two roles of, overrides of both kinds,
// and a chain through a task bob has no share of.
const partSpec = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: fed, labels: {team: ml}}
spec:
  params: [{name: size, default: "3"}]
  timeout: 1h
  federation:
    roles: {guest: [alice], host: [bob], arbiter: [bob, carol]}
    admissionTimeout: 30s
  outputs:
    parameters: [{name: total, value: "{{tasks.a.outputs.parameters.total}}"}]
  tasks:
  - name: a
    roles: [host, arbiter]
    command: [train, "{{params.size}}"]
    args: [--base]
    env: [{name: MODE, value: base}, {name: KEEP, value: "1"}]
    retries: {limit: 3, backoff: {duration: 5s}}
    admissionTimeout: 10s
    outputs: {parameters: [{name: total}]}
    perRole:
      host: {env: [{name: MODE, value: host}], resources: {cpu: "2"}}
      arbiter: {args: [--arbiter]}
    perParty:
      bob: {env: [{name: MODE, value: bob}, {name: EXTRA, valueFrom: {secret: key}}]}
  - {name: b, roles: [guest], command: [x], dependsOn: [a]}
  - {name: c, roles: [arbiter], command: [x], dependsOn: [b], perParty: {carol: {args: ["{{tasks.a.outputs.parameters.total}}"]}}}
`

func TestPartOf(t *testing.T) {
	t.Parallel()
	wf := decodeText(t, partSpec)
	if _, errs := compileText(t, partSpec); len(errs) > 0 {
		t.Fatalf("the federated workflow does not compile: %v", errs)
	}

	cases := map[string]struct {
		party  string
		shares []apiv1.ShareRef
		tasks  []apiv1.Task
	}{
		"a party of one role per task keeps the tasks' names": {
			party:  "carol",
			shares: []apiv1.ShareRef{{Task: "a", Party: "carol", Role: "arbiter", Name: "a"}, {Task: "c", Party: "carol", Role: "arbiter", Name: "c"}},
			tasks: []apiv1.Task{
				{
					Name: "a", Command: []string{"train", "{{params.size}}"}, Args: []string{"--arbiter"},
					Env:     []apiv1.EnvVar{{Name: "MODE", Value: "base"}, {Name: "KEEP", Value: "1"}},
					Retries: &apiv1.RetryStrategy{Limit: 3}, Outputs: &apiv1.Outputs{Parameters: []apiv1.OutputParameter{{Name: "total"}}},
				},
				{Name: "c", Command: []string{"x"}, Args: []string{"{{tasks.a.outputs.parameters.total}}"}, DependsOn: []string{"a"}},
			},
		},
		"a party of two roles runs a share of each, perRole then perParty applied": {
			party: "bob",
			shares: []apiv1.ShareRef{
				{Task: "a", Party: "bob", Role: "host", Name: "a-host"},
				{Task: "a", Party: "bob", Role: "arbiter", Name: "a-arbiter"},
				{Task: "c", Party: "bob", Role: "arbiter", Name: "c"},
			},
			tasks: []apiv1.Task{
				{
					Name: "a-host", Command: []string{"train", "{{params.size}}"}, Args: []string{"--base"},
					Env: []apiv1.EnvVar{
						{Name: "MODE", Value: "bob"},
						{Name: "KEEP", Value: "1"},
						{Name: "EXTRA", ValueFrom: &apiv1.EnvSource{Secret: "key"}},
					},
					Resources: &apiv1.Resources{CPU: "2"},
					Retries:   &apiv1.RetryStrategy{Limit: 3}, Outputs: &apiv1.Outputs{Parameters: []apiv1.OutputParameter{{Name: "total"}}},
				},
				{
					Name: "a-arbiter", Command: []string{"train", "{{params.size}}"}, Args: []string{"--arbiter"},
					Env: []apiv1.EnvVar{
						{Name: "MODE", Value: "bob"},
						{Name: "KEEP", Value: "1"},
						{Name: "EXTRA", ValueFrom: &apiv1.EnvSource{Secret: "key"}},
					},
					Retries: &apiv1.RetryStrategy{Limit: 3}, Outputs: &apiv1.Outputs{Parameters: []apiv1.OutputParameter{{Name: "total"}}},
				},
				// c depends on b, which bob has no share of: it follows b's own upstream.
				{Name: "c", Command: []string{"x"}, DependsOn: []string{"a-host", "a-arbiter"}},
			},
		},
		"a dependency on a task the party has no share of is dropped": {
			party:  "alice",
			shares: []apiv1.ShareRef{{Task: "b", Party: "alice", Role: "guest", Name: "b"}},
			tasks:  []apiv1.Task{{Name: "b", Command: []string{"x"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			before, _ := json.Marshal(wf)
			part, shares, err := PartOf(wf, tc.party)
			if err != nil {
				t.Fatal(err)
			}
			if after, _ := json.Marshal(wf); !bytes.Equal(before, after) {
				t.Error("PartOf changed the workflow it was given")
			}
			if diff := cmp.Diff(tc.shares, shares); diff != "" {
				t.Errorf("shares (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.tasks, part.Spec.Tasks); diff != "" {
				t.Errorf("tasks (-want +got):\n%s", diff)
			}
			s := part.Spec
			if part.Metadata.Name != "fed-"+tc.party || part.Metadata.Labels["team"] != "ml" || s.Federation != nil || s.Outputs != nil ||
				s.Timeout != "1h" || len(s.Params) != 1 {
				t.Errorf("part %s: %+v; want its name, labels, params and timeout, without federation nor outputs", part.Metadata.Name, s)
			}
			checkPartCompiles(t, part)
		})
	}
}

// checkPartCompiles compiles part as a party does: as any document.
func checkPartCompiles(t *testing.T, part *apiv1.Workflow) {
	t.Helper()
	text, err := json.Marshal(part)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := Read("part.json", bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	checked, err := CheckDocuments(docs, nil)
	if err != nil || len(checked) != 1 {
		t.Fatalf("the part does not compile: %v", err)
	}
	for _, task := range checked[0].Plan.Tasks {
		if task.Federated != nil || task.Kind != apiv1.NodeKindCommand {
			t.Errorf("the part's task %s is of kind %q, want a plain command", task.Spec.Name, task.Kind)
		}
	}
}

func TestPartOfRefusesAPartyWithoutShares(t *testing.T) {
	t.Parallel()
	plain := decodeText(t, header+"spec:\n  tasks:\n  - {name: a, command: [x]}\n")
	idle := decodeText(t, header+"spec:\n  federation: {roles: {guest: [alice], host: [bob]}}\n  tasks:\n  - {name: a, command: [x], roles: [guest]}\n")
	for _, tc := range []struct {
		wf    *apiv1.Workflow
		party string
		field string
	}{
		{plain, "alice", "spec.federation"},
		{idle, "bob", "spec.federation.roles"},
		{idle, "zed", "spec.federation.roles"},
	} {
		part, _, err := PartOf(tc.wf, tc.party)
		var e *apiv1.Error
		if part != nil || err == nil || !asError(err, &e) || e.Code != apiv1.CodeNoShare || e.Field != tc.field || !strings.Contains(e.Message, tc.party) && tc.field != "spec.federation" {
			t.Errorf("PartOf(%s) = %v, %v; want a KLN-1067 at %s", tc.party, part, err, tc.field)
		}
	}
}

func decodeText(t *testing.T, text string) *apiv1.Workflow {
	t.Helper()
	docs, err := Read("wf.yaml", strings.NewReader(text))
	if err != nil || len(docs) != 1 {
		t.Fatalf("read: %v", err)
	}
	wf, err := DecodeWorkflow(&docs[0])
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return wf
}

func asError(err error, e **apiv1.Error) bool {
	errs := apiv1.Errors(err)
	if len(errs) != 1 {
		return false
	}
	*e = errs[0]
	return true
}
