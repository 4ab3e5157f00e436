package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// setPolicy replaces at s the policy of alice's parts with the YAML given.
func (s *fedServer) setPolicy(t *testing.T, policy string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := s.kiln(t, "party", "add", "alice", "--policy", path); r.code != 0 {
		t.Fatalf("%s: party add alice --policy: %s", s.name, r.stderr)
	}
}

// A party's policy decides what an initiator's parts run there: a
// command line, a secret or resources it does not allow are refused at
// submit, naming the party, the rule and the field, and nothing is made
// at any party; what it allows runs.
func TestAPartysPolicyDecidesWhatRunsWithItsData(t *testing.T) {
	t.Parallel()
	alice, bob, carol := threeParties(t)
	script := exampleScript(t)
	allowed := "commands: [\"python3 " + script + "\"]\nsecrets: [private-value]\nmaxResources: {cpu: 500m}\n"
	bob.setPolicy(t, allowed)
	params := secureSumParams(t)
	for _, c := range []struct {
		what, wf string
		policy   string
		field    string
	}{
		{"a command it does not allow", strings.Replace(secureSum(t), `command: [python3, "{{params.script}}"]`, `command: [sh, -c, "cat /etc/passwd"]`, 1), allowed, "spec.tasks[0].command"},
		{"a secret it does not name", secureSum(t), "commands: [\"python3 " + script + "\"]\n", "spec.tasks[0].perRole.host.env[0].valueFrom.secret"},
		{"more than a share may ask", strings.Replace(secureSum(t), "cpu: 100m", "cpu: \"1\"", 1), allowed, "spec.tasks[0].resources"},
	} {
		bob.setPolicy(t, c.policy)
		r := alice.kilnStdin(t, c.wf, "run", "-", "-p", "script="+params["script"], "-p", "sdk="+params["sdk"])
		if r.code == 0 || !strings.Contains(r.stderr, string(apiv1.CodePolicy)) || !strings.Contains(r.stderr, "party/bob") || !strings.Contains(r.stderr, c.field) {
			t.Errorf("%s: submit = exit %d, %s; want %s naming party/bob and %s", c.what, r.code, r.stderr, apiv1.CodePolicy, c.field)
		}
	}
	for _, s := range []*fedServer{alice, bob, carol} {
		if list := s.kiln(t, "get", "runs"); strings.Contains(list.stdout, "secure-sum") {
			t.Errorf("%s holds a run after refused submissions:\n%s", s.name, list.stdout)
		}
	}
	bob.setPolicy(t, allowed)
	run := alice.submit(t, secureSum(t), params)
	if done := alice.waitDone(t, run.ID, 2*time.Minute); done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("the allowed run: %s %s", done.Status.Phase, done.Status.Message)
	}
	if list := bob.kiln(t, "party", "list"); !strings.Contains(list.stdout, "1 command line, 1 secret") {
		t.Errorf("bob's party list does not show alice's policy:\n%s", list.stdout)
	}
}

// The party enforces its policy itself, whatever the initiator checked:
// a policy narrowed after the run was submitted refuses the part when the
// run reaches the party.
func TestAPartyEnforcesItsPolicyWhenThePartIsMade(t *testing.T) {
	t.Parallel()
	alice, bob, _ := threeParties(t)
	gate := filepath.Join(t.TempDir(), "go")
	run := alice.submit(t, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: narrowed}
spec:
  federation:
    roles: {guest: [alice], host: [bob]}
  tasks:
  - {name: first, roles: [guest], command: [sh, -c, 'while [ ! -e `+gate+` ]; do sleep 0.1; done'], resources: {cpu: 100m}}
  - {name: second, roles: [guest, host], dependsOn: [first], command: ["true"], resources: {cpu: 100m}}
`, nil)
	bob.setPolicy(t, "commands: [/usr/bin/python3]\n")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	done := alice.waitDone(t, run.ID, 2*time.Minute)
	n := nodeOf(t, done, "second")
	if done.Status.Phase != apiv1.PhaseFailed || n.Code != apiv1.CodePartRefused || !strings.Contains(n.Message, string(apiv1.CodePolicy)) {
		t.Errorf("run: %s; task second %s %s; want Failed with %s carrying bob's %s", done.Status.Phase, n.Code, n.Message, apiv1.CodePartRefused, apiv1.CodePolicy)
	}
}

// An output parameter crosses parties party to party, to the roles the
// workflow names and only if the owning party's policy lets it leave:
// refused at submit otherwise, and never through the initiator's record.
func TestAnOutputParameterCrossesPartiesWhereTheWorkflowAndThePolicyAllow(t *testing.T) {
	t.Parallel()
	alice := startFed(t, "alice", "127.0.0.1")
	bob := startFed(t, "bob", "127.0.0.2")
	federate(t, alice, bob)
	wf := `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: crossing}
spec:
  federation:
    roles: {guest: [alice], host: [bob]}
  tasks:
  - name: score
    roles: [host]
    command: [sh, -c, 'echo 0.93 > $KILN_OUTPUTS/auc; echo raw-$((40+2)) > $KILN_OUTPUTS/raw']
    outputs: {parameters: [{name: auc, to: [guest]}, {name: raw}]}
  - name: report
    roles: [guest]
    dependsOn: [score]
    command: [sh, -c, 'printf %s "{{tasks.score.outputs.parameters.auc}}" > $KILN_OUTPUTS/seen']
    outputs: {parameters: [{name: seen}]}
`
	if r := alice.kilnStdin(t, wf, "run", "-"); r.code == 0 || !strings.Contains(r.stderr, string(apiv1.CodePolicy)) || !strings.Contains(r.stderr, "spec.tasks[0].outputs.parameters[0].to") {
		t.Errorf("an output bob's policy keeps = exit %d, %s; want %s at spec.tasks[0].outputs.parameters[0].to", r.code, r.stderr, apiv1.CodePolicy)
	}
	leaks := strings.Replace(wf, `printf %s "{{tasks.score.outputs.parameters.auc}}"`, `printf %s "{{tasks.score.outputs.parameters.raw}}"`, 1)
	if r := alice.kilnStdin(t, leaks, "run", "-"); r.code == 0 || !strings.Contains(r.stderr, string(apiv1.CodeCrossParty)) {
		t.Errorf("reading an output the workflow keeps at bob = exit %d, %s; want %s", r.code, r.stderr, apiv1.CodeCrossParty)
	}
	bob.setPolicy(t, "commands: [\"*\"]\noutputs: [score.auc]\n")
	run := alice.submit(t, wf, nil)
	done := alice.waitDone(t, run.ID, 2*time.Minute)
	if done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run: %s %s %s", done.Status.Phase, done.Status.Code, done.Status.Message)
	}
	part := alice.waitDone(t, apiv1.PartID(run.ID, "alice"), time.Minute)
	if got := nodeOf(t, part, "report").Outputs["seen"]; got != "0.93" {
		t.Errorf("alice's report read %q; want bob's 0.93", got)
	}
	sent, _ := bob.api.Messages(t.Context(), apiv1.PartID(run.ID, "bob"))
	got, _ := alice.api.Messages(t.Context(), apiv1.PartID(run.ID, "alice"))
	if len(sent) != 1 || len(got) != 1 || sent[0].Name != "output.auc" || sent[0].Digest != got[0].Digest || sent[0].Party != "alice" || got[0].Party != "bob" {
		t.Errorf("the output's crossing logged at bob %+v and at alice %+v; want once at each end, alike", sent, got)
	}
	if raw := nodeOf(t, bob.waitDone(t, apiv1.PartID(run.ID, "bob"), time.Minute), "score").Outputs["raw"]; raw != "raw-42" {
		t.Fatalf("bob's score wrote raw %q; want raw-42", raw)
	}
	if whole := alice.kiln(t, "describe", "run", string(run.ID), "-o", "json"); strings.Contains(whole.stdout, "raw-42") {
		t.Errorf("bob's raw output reached the initiator's record")
	}
}

// An artifact (a file) crosses parties as a parameter does: bob's share
// writes it, alice's reads her own copy, whole, at the path the reference
// gives; both ends log it.
func TestAnArtifactCrossesPartiesWhereTheWorkflowAndThePolicyAllow(t *testing.T) {
	t.Parallel()
	alice := startFed(t, "alice", "127.0.0.1")
	bob := startFed(t, "bob", "127.0.0.2")
	federate(t, alice, bob)
	bob.setPolicy(t, "commands: [\"*\"]\noutputs: [train.model]\n")
	run := alice.submit(t, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: model}
spec:
  federation:
    roles: {guest: [alice], host: [bob]}
  tasks:
  - name: train
    roles: [host]
    command: [sh, -c, 'seq 1 200000 > $KILN_OUTPUTS/model.txt']
    outputs: {artifacts: [{name: model, path: model.txt, to: [guest]}]}
  - name: use
    roles: [guest]
    dependsOn: [train]
    command: [sh, -c, 'sha256sum < "{{tasks.train.outputs.artifacts.model}}" | cut -c1-64 > $KILN_OUTPUTS/sum; wc -l < "{{tasks.train.outputs.artifacts.model}}" > $KILN_OUTPUTS/lines']
    outputs: {parameters: [{name: sum}, {name: lines}]}
`, nil)
	done := alice.waitDone(t, run.ID, 2*time.Minute)
	if done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run: %s %s %s", done.Status.Phase, done.Status.Code, done.Status.Message)
	}
	use := nodeOf(t, alice.waitDone(t, apiv1.PartID(run.ID, "alice"), time.Minute), "use")
	if strings.TrimSpace(use.Outputs["lines"]) != "200000" {
		t.Errorf("alice's copy of bob's model has %q lines; want 200000", use.Outputs["lines"])
	}
	sent, _ := bob.api.Messages(t.Context(), apiv1.PartID(run.ID, "bob"))
	got, _ := alice.api.Messages(t.Context(), apiv1.PartID(run.ID, "alice"))
	if len(sent) != 1 || len(got) != 1 || sent[0].Name != "artifact.model" || "sha256:"+strings.TrimSpace(use.Outputs["sum"]) != got[0].Digest || sent[0].Digest != got[0].Digest {
		t.Errorf("the artifact's crossing logged at bob %+v and at alice %+v, alice read sha256:%s; want once at each end, alike, as read", sent, got, use.Outputs["sum"])
	}
}
