package workflow

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
)

// fedSpec is a federation of three parties; bob fills two roles.
const fedSpec = "spec:\n  federation:\n    roles: {guest: [alice], host: [bob, dave], arbiter: [bob]}\n  tasks:\n"

func TestFederatedWorkflowReportsEveryProblem(t *testing.T) {
	t.Parallel()

	cases := map[string]struct {
		spec string
		want []problem
	}{
		"roles without a federation": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x], roles: [guest], perRole: {guest: {}}, perParty: {alice: {}}}\n",
			want: []problem{
				{apiv1.CodeTaskRoles, "spec.tasks[0].roles"},
				{apiv1.CodeOverrideKey, "spec.tasks[0].perRole"},
				{apiv1.CodeOverrideKey, "spec.tasks[0].perParty"},
			},
		},
		"a federation needs roles with parties, named as labels": {
			spec: "spec:\n  federation:\n    roles: {Guest: [alice], host: [], arbiter: [Bob, carol, carol]}\n    admissionTimeout: soon\n  tasks:\n  - {name: a, command: [x], roles: [arbiter]}\n",
			want: []problem{
				{apiv1.CodeFederationRoles, "spec.federation.roles.Guest"},
				{apiv1.CodeFederationRoles, "spec.federation.roles.arbiter[0]"},
				{apiv1.CodeFederationRoles, "spec.federation.roles.arbiter[2]"},
				{apiv1.CodeFederationRoles, "spec.federation.roles.host"},
				{apiv1.CodeDuration, "spec.federation.admissionTimeout"},
			},
		},
		"empty roles": {
			spec: "spec:\n  federation: {roles: {}}\n  tasks:\n  - {name: a, command: [x]}\n",
			want: []problem{
				{apiv1.CodeFederationRoles, "spec.federation.roles"},
				{apiv1.CodeTaskRoles, "spec.tasks[0].roles"},
			},
		},
		"every task lists known roles, once": {
			spec: fedSpec + "  - {name: a, command: [x]}\n  - {name: b, command: [x], roles: [guest, guest, judge]}\n",
			want: []problem{
				{apiv1.CodeTaskRoles, "spec.tasks[0].roles"},
				{apiv1.CodeTaskRoles, "spec.tasks[1].roles[1]"},
				{apiv1.CodeUnknownRole, "spec.tasks[1].roles[2]"},
			},
		},
		"perRole and perParty keys are the task's roles and parties": {
			spec: fedSpec + "  - name: a\n    command: [x]\n    roles: [guest]\n" +
				"    perRole: {guest: {env: [{name: KILN_X, value: v}]}, host: {}}\n" +
				"    perParty: {alice: {resources: {cpu: lots}}, bob: {}}\n",
			want: []problem{
				{apiv1.CodeReservedEnv, "spec.tasks[0].perRole.guest.env[0].name"},
				{apiv1.CodeOverrideKey, "spec.tasks[0].perRole.host"},
				{apiv1.CodeQuantity, "spec.tasks[0].perParty.alice.resources.cpu"},
				{apiv1.CodeOverrideKey, "spec.tasks[0].perParty.bob"},
			},
		},
		"what cannot run across parties is named": {
			spec: fedSpec + "  - {name: a, command: [x], roles: [guest]}\n" +
				"  - name: b\n    command: [x]\n    roles: [guest]\n    forEach: {items: [1]}\n    cache: {}\n" +
				"    when: 'true'\n    depends: a\n" +
				"  - {name: c, roles: [guest], gate: {approve: {}}}\n" +
				"  - {name: d, command: [x], roles: [guest], trigger: allDone, dependsOn: [a]}\n" +
				"  - {name: e, command: [x], roles: [guest], dynamic: {output: f}, outputs: {parameters: [{name: f}]}}\n" +
				"  onExit:\n  - {name: z, command: [x]}\n",
			want: []problem{
				{apiv1.CodeNotFederable, "spec.onExit"},
				{apiv1.CodeNotFederable, "spec.tasks[1].forEach"},
				{apiv1.CodeNotFederable, "spec.tasks[1].cache"},
				{apiv1.CodeNotFederable, "spec.tasks[1].depends"},
				{apiv1.CodeNotFederable, "spec.tasks[1].when"},
				{apiv1.CodeNotFederable, "spec.tasks[2].gate"},
				{apiv1.CodeNotFederable, "spec.tasks[3].trigger"},
				{apiv1.CodeNotFederable, "spec.tasks[4].dynamic"},
			},
		},
		"a share's name is taken at its party": {
			spec: fedSpec + "  - {name: a-host, command: [x], roles: [host]}\n  - {name: a, command: [x], roles: [host, arbiter]}\n",
			want: []problem{{apiv1.CodeShareName, "spec.tasks[1].roles"}},
		},
		"a party reads only its own shares' outputs": {
			spec: fedSpec + "  - {name: a, command: [x], roles: [guest], outputs: {parameters: [{name: p}]}}\n" +
				"  - {name: b, command: [x], roles: [host, arbiter], outputs: {parameters: [{name: p}]}}\n" +
				"  - name: c\n    roles: [guest, host]\n    dependsOn: [a, b]\n    command: [x, '{{tasks.a.outputs.parameters.p}}']\n" +
				"    perParty: {alice: {args: ['{{tasks.b.outputs.parameters.p}}']}}\n",
			want: []problem{
				{apiv1.CodeCrossParty, "spec.tasks[2].command[1]"}, // neither bob nor dave runs a
				{apiv1.CodeCrossParty, "spec.tasks[2].perParty.alice.args[0]"},
			},
		},
		"a party that runs an upstream task under several roles has no share of its name": {
			spec: fedSpec + "  - {name: a, command: [x], roles: [host, arbiter], outputs: {parameters: [{name: p}]}}\n" +
				"  - {name: b, command: [x, '{{tasks.a.outputs.parameters.p}}'], roles: [host], dependsOn: [a]}\n",
			want: []problem{{apiv1.CodeCrossParty, "spec.tasks[1].command[1]"}},
		},
		"an output parameter crosses parties only to the roles its to names, from one share": {
			spec: fedSpec + "  - {name: a, command: [x], roles: [guest], outputs: {parameters: [{name: p, to: [host]}, {name: q}]}}\n" +
				"  - {name: b, command: [x], roles: [host], outputs: {parameters: [{name: p, to: [guest, nobody]}]}}\n" +
				"  - name: c\n    roles: [host]\n    dependsOn: [a]\n    command: [x, '{{tasks.a.outputs.parameters.p}}', '{{tasks.a.outputs.parameters.q}}']\n" +
				"  - {name: d, roles: [arbiter], dependsOn: [a], command: [x, '{{tasks.a.outputs.parameters.p}}']}\n",
			want: []problem{
				{apiv1.CodeUnknownRole, "spec.tasks[1].outputs.parameters[0].to[1]"},
				{apiv1.CodeCrossParty, "spec.tasks[1].outputs.parameters[0].to"}, // b runs at bob and dave
				{apiv1.CodeCrossParty, "spec.tasks[2].command[2]"},               // q has no to
			},
		},
		"an artifact crosses parties only to the roles its to names": {
			spec: fedSpec + "  - {name: a, command: [x], roles: [guest], outputs: {artifacts: [{name: m, path: m, to: [host]}, {name: k, path: k}]}}\n" +
				"  - name: c\n    roles: [host]\n    dependsOn: [a]\n    command: [x, '{{tasks.a.outputs.artifacts.m}}', '{{tasks.a.outputs.artifacts.k}}']\n",
			want: []problem{{apiv1.CodeCrossParty, "spec.tasks[1].command[2]"}},
		},
		"to is a federated workflow's only": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x], outputs: {parameters: [{name: p, to: [guest]}]}}\n",
			want: []problem{{apiv1.CodeTaskRoles, "spec.tasks[0].outputs.parameters[0].to"}},
		},
		"a federation lists at most 256 parties": {
			spec: bigFederation(257, 1),
			want: []problem{{apiv1.CodeOutOfRange, "spec.federation.roles"}},
		},
		"a federated workflow has at most 10000 shares": {
			spec: bigFederation(256, 40),
			want: []problem{{apiv1.CodeOutOfRange, "spec.tasks[39].roles"}},
		},
		"a party's part is compiled as the party will": {
			spec: fedSpec + "  - {name: a, command: [x], roles: [guest]}\n" +
				"  - {name: b, command: [x], roles: [host], perParty: {dave: {args: ['{{tasks.nope.outputs.parameters.p}}']}}}\n",
			want: []problem{{apiv1.CodeTemplate, "spec.tasks[1].args[0]"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, errs := compileText(t, header+tc.spec)
			if p != nil {
				t.Errorf("Compile returned a plan for an invalid spec")
			}
			var got []problem
			for _, e := range errs {
				got = append(got, problem{e.Code, e.Field})
				if e.File != "wf.yaml" || e.Object != "Workflow/wf" {
					t.Errorf("error %q does not name file and object", e)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

func TestPartErrorsNameThePartyAndShare(t *testing.T) {
	t.Parallel()
	_, errs := compileText(t, header+fedSpec+"  - {name: a, command: [x], roles: [host, arbiter], perParty: {bob: {args: ['{{nope}}']}}}\n")
	if len(errs) != 2 {
		t.Fatalf("errors = %v, want one per share of bob's", errs)
	}
	for _, e := range errs {
		if e.Code != apiv1.CodeTemplate || e.Field != "spec.tasks[0].args[0]" || !strings.Contains(e.Message, "in party bob's part, as task a-") {
			t.Errorf("error %q does not name the task's field, the party and the share", e)
		}
	}
}

func TestFederatedTaskCompilesToSharesAndHoldsNoRoom(t *testing.T) {
	t.Parallel()
	spec := "spec:\n  federation:\n    roles: {guest: [alice], host: [bob, dave], arbiter: [bob]}\n    partyTimeout: 2m\n  tasks:\n" +
		"  - {name: a, command: [x], roles: [guest, host, arbiter], resources: {cpu: 4}, retries: {limit: 2}, timeout: 1m}\n" +
		"  - {name: b, command: [x], roles: [guest], dependsOn: [a], admissionTimeout: 5s}\n" +
		"  - {name: c, train: {runtime: torch-distributed, command: [python3, t.py], numNodes: 2}, roles: [host]}\n"
	p, errs := compileText(t, header+spec)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	a := p.Tasks[0]
	if a.Kind != apiv1.NodeKindFederated || a.Federated == nil {
		t.Fatalf("task a compiled to kind %q, federated %v", a.Kind, a.Federated)
	}
	want := []apiv1.ShareRef{
		{Task: "a", Party: "alice", Role: "guest", Name: "a"},
		{Task: "a", Party: "bob", Role: "host", Name: "a-host"},
		{Task: "a", Party: "dave", Role: "host", Name: "a"},
		{Task: "a", Party: "bob", Role: "arbiter", Name: "a-arbiter"},
	}
	if diff := cmp.Diff(want, a.Federated.Shares); diff != "" {
		t.Errorf("shares (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"alice", "bob", "dave"}, a.Federated.Parties()); diff != "" {
		t.Errorf("parties (-want +got):\n%s", diff)
	}
	for _, task := range p.Tasks {
		if task.Kind != apiv1.NodeKindFederated || task.Least() != (resource.Request{}) || task.Train != nil {
			t.Errorf("task %s: kind %q, least %+v, train %v: want a federated task that holds no room", task.Spec.Name, task.Kind, task.Least(), task.Train)
		}
	}
	if p.MinRequest != (resource.Request{}) {
		t.Errorf("MinRequest = %+v, want zero", p.MinRequest)
	}
	if a.Retry.Limit != 2 || a.Timeout != time.Minute || a.Federated.AdmissionTimeout != DefaultFederationTimeout || a.Federated.PartyTimeout != 2*time.Minute {
		t.Errorf("task a: retry %+v, timeout %v, federated %+v", a.Retry, a.Timeout, a.Federated)
	}
	if b := p.Tasks[1]; b.Federated.AdmissionTimeout != 5*time.Second || b.AdmissionTimeout != 0 {
		t.Errorf("task b waits %v for its shares and %v for room here; want 5s and none", b.Federated.AdmissionTimeout, b.AdmissionTimeout)
	}
	if err := RequireImages(&Document{File: "wf.yaml"}, p); err != nil {
		t.Errorf("RequireImages: %v; a federated task runs no container here", err)
	}
}

func TestFederatedWorkflowCannotBeASubworkflow(t *testing.T) {
	t.Parallel()
	text := header + "spec:\n  tasks:\n  - {name: a, workflow: {name: fed}}\n---\n" +
		"apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: fed}\n" + fedSpec + "  - {name: a, command: [x], roles: [guest]}\n"
	docs, err := Read("wf.yaml", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	_, err = CheckDocuments(docs, nil)
	errs := apiv1.Errors(err)
	if len(errs) != 1 || errs[0].Code != apiv1.CodeNotFederable || errs[0].Field != "spec.federation" || errs[0].Object != "Workflow/fed" {
		t.Errorf("errors = %v, want one KLN-1064 at Workflow/fed's spec.federation", errs)
	}
}

// bigFederation is a spec whose one role has parties parties, and tasks
// tasks that run as it.
func bigFederation(parties, tasks int) string {
	var b strings.Builder
	b.WriteString("spec:\n  federation:\n    roles:\n      r:\n")
	for i := range parties {
		fmt.Fprintf(&b, "      - p%d\n", i)
	}
	b.WriteString("  tasks:\n")
	for i := range tasks {
		fmt.Fprintf(&b, "  - {name: t%d, command: [x], roles: [r]}\n", i)
	}
	return b.String()
}

// TestALargeFederationCompiles compiles 256 parties of 39 tasks each.
func TestALargeFederationCompiles(t *testing.T) {
	t.Parallel()
	p, errs := compileText(t, header+bigFederation(256, 39))
	if len(errs) > 0 || p == nil {
		t.Fatalf("errors: %v", errs)
	}
}

// BenchmarkCompileALargeFederation times what TestALargeFederationCompiles
// checks: how fast is a benchmark's question, never a test's, as the
// machines that run the tests are shared.
func BenchmarkCompileALargeFederation(b *testing.B) {
	text := header + bigFederation(256, 39)
	for b.Loop() {
		if p, errs := compileText(b, text); len(errs) > 0 || p == nil {
			b.Fatalf("errors: %v", errs)
		}
	}
}

func TestCrossPartyErrorsSayWhy(t *testing.T) {
	t.Parallel()
	_, errs := compileText(t, header+fedSpec+"  - {name: a, command: [x], roles: [host, arbiter], outputs: {parameters: [{name: p}]}}\n"+
		"  - {name: b, command: [x, '{{tasks.a.outputs.parameters.p}}'], roles: [guest, host], dependsOn: [a]}\n")
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Message)
	}
	want := []string{
		`{{tasks.a.outputs.parameters.p}}: task "a" has no share at party alice, which therefore cannot read its outputs`,
		`{{tasks.a.outputs.parameters.p}}: task "a" runs at party bob (as host and arbiter) under several roles, so its shares there are named a-<role>, not a`,
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

// A share reading another party's output parameter reads, in its part,
// the input its party fetches: {{federation.TASK.PARAM}}.
func TestAPartReadsAnotherPartysOutputAsAnInput(t *testing.T) {
	t.Parallel()
	p, errs := compileText(t, header+"spec:\n  federation:\n    roles: {guest: [alice], host: [bob]}\n  tasks:\n"+
		"  - {name: score, command: [x], roles: [host], outputs: {parameters: [{name: auc, to: [guest]}]}}\n"+
		"  - {name: report, roles: [guest], dependsOn: [score], command: [echo, 'auc={{tasks.score.outputs.parameters.auc}}']}\n")
	if len(errs) > 0 {
		t.Fatalf("the workflow does not compile: %v", errs)
	}
	wf := p.Workflow
	part, _, err := PartOf(wf, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if got := part.Spec.Tasks[0].Command[1]; got != "auc={{federation.score.auc}}" {
		t.Errorf("alice's report reads %q; want the input {{federation.score.auc}}", got)
	}
	want := []apiv1.CrossInput{{Share: "report", Task: "score", Param: "auc", Party: "bob", Role: "host"}}
	if diff := cmp.Diff(want, CrossInputs(wf, "alice")); diff != "" {
		t.Errorf("alice's inputs (-want +got):\n%s", diff)
	}
	if in := CrossInputs(wf, "bob"); len(in) != 0 {
		t.Errorf("bob reads %v; want nothing of another party", in)
	}
	if _, err := CompilePart(&Document{Kind: apiv1.KindWorkflow, Name: part.Metadata.Name}, part, want); err != nil {
		t.Errorf("alice's part does not compile: %v", err)
	}
	if _, err := CompilePart(&Document{Kind: apiv1.KindWorkflow, Name: part.Metadata.Name}, part, nil); apiv1.CodeOf(err) != apiv1.CodeTemplate {
		t.Errorf("alice's part without its inputs = %v; want %s", err, apiv1.CodeTemplate)
	}
}
