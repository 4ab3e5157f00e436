package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// sleepers is a federated workflow whose one task sleeps at alice, bob
// and carol, each share writing its party and attempt to a ledger first.
func sleepers(partyTimeout string, extra string) string {
	return `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: sleepers}
spec:
  params: [{name: ledger}, {name: seconds, default: "8"}]
  federation:
    roles: {guest: [alice], host: [bob], arbiter: [carol]}
    admissionTimeout: 20s
    partyTimeout: ` + partyTimeout + `
  tasks:
  - name: work
    roles: [guest, host, arbiter]
    command: [sh, -c, 'echo "$KILN_PARTY $KILN_ATTEMPT" >> {{params.ledger}}; sleep {{params.seconds}}']
    resources: {cpu: 100m, memory: 16Mi}
` + extra
}

// ledger is a file every party's tasks (which run as project accounts)
// may append to.
func ledger(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "ledger")
}

// ledgerLines are the shares that started, one line each.
func ledgerLines(t *testing.T, path string) []string {
	t.Helper()
	b, _ := os.ReadFile(path)
	lines := strings.Fields(strings.ReplaceAll(string(b), " ", "/"))
	slices.Sort(lines)
	return lines
}

// waitRunning waits until every share of task work in run at s runs.
func waitRunning(t *testing.T, s *fedServer, id apiv1.RunID) {
	const task, state = "work", apiv1.ShareRunning
	t.Helper()
	waitFor(t, "every share of "+task+" "+state, func() bool {
		n := nodeOf(t, s.run(t, id), task)
		return len(n.Parties) > 0 && !slices.ContainsFunc(n.Parties, func(p apiv1.PartyShare) bool { return p.State != state })
	})
}

// partEnds waits for s's part of run to end, and returns it.
func partEnds(t *testing.T, s *fedServer, run apiv1.RunID) *apiv1.Run {
	t.Helper()
	return s.waitDone(t, apiv1.PartID(run, s.name), 60*time.Second)
}

func TestFederatedRunFailsFastWhenAPartyCannotEverAdmitItsShare(t *testing.T) {
	t.Parallel()
	alice, bob, carol := threeParties(t)
	wf := sleepers("30s", "    perParty: {bob: {resources: {cpu: \"512\"}}}\n")
	run := alice.submit(t, wf, map[string]string{"ledger": ledger(t)})
	done := alice.waitDone(t, run.ID, time.Minute)
	if done.Status.Phase != apiv1.PhaseFailed || !strings.Contains(done.Status.Message+nodeOf(t, done, "work").Message, "bob") {
		t.Fatalf("run %s: %s %s; task: %+v; want Failed naming bob", run.ID, done.Status.Phase, done.Status.Message, nodeOf(t, done, "work"))
	}
	n := nodeOf(t, done, "work")
	if n.Code != apiv1.CodePartRefused && n.Code != apiv1.CodeShareNeverFits {
		t.Errorf("task work failed with %s %s; want %s or %s", n.Code, n.Message, apiv1.CodePartRefused, apiv1.CodeShareNeverFits)
	}
	if len(n.Attempts) != 1 {
		t.Errorf("task work made %d attempts; want one (the refusal is permanent)", len(n.Attempts))
	}
	// Nothing ran or is held anywhere: a party's part, if it was made
	// before bob refused, ends without starting its share.
	for _, s := range []*fedServer{alice, bob, carol} {
		if list := s.kiln(t, "get", "runs"); !strings.Contains(list.stdout, string(apiv1.PartID(run.ID, s.name))) {
			continue
		}
		part := partEnds(t, s, run.ID)
		if pn := nodeOf(t, part, "work"); len(pn.Attempts) != 0 || part.Status.Phase != apiv1.PhaseFailed || pn.Code != apiv1.CodeShareAborted {
			t.Errorf("%s's part: %s; share %s %s after %d attempts; want it Failed (%s) without starting", s.name, part.Status.Phase, pn.Code, pn.Message, len(pn.Attempts), apiv1.CodeShareAborted)
		}
	}
}

func TestFederatedRunSurvivesAPartyServerKilledAndRestarted(t *testing.T) {
	t.Parallel()
	alice, bob, carol := threeParties(t)
	book := ledger(t)
	run := alice.submit(t, sleepers("60s", ""), map[string]string{"ledger": book, "seconds": "10"})
	waitRunning(t, alice, run.ID)
	bob.kill9(t)
	pause(t, 2*time.Second)
	bob.restart(t)
	done := alice.waitDone(t, run.ID, 2*time.Minute)
	if done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s: %s %s; shares %s", run.ID, done.Status.Phase, done.Status.Message, shareLine(nodeOf(t, done, "work")))
	}
	if got, want := ledgerLines(t, book), []string{"alice/1", "bob/1", "carol/1"}; !slices.Equal(got, want) {
		t.Errorf("shares started %v; want each party's once: %v", got, want)
	}
	for _, s := range []*fedServer{alice, bob, carol} {
		part := partEnds(t, s, run.ID)
		if pn := nodeOf(t, part, "work"); part.Status.Phase != apiv1.PhaseSucceeded || len(pn.Attempts) != 1 {
			t.Errorf("%s's part: %s with %d attempts; want Succeeded once", s.name, part.Status.Phase, len(pn.Attempts))
		}
	}
}

func TestFederatedRunFailsAndReleasesEverythingWhenAPartyStopsPastItsTimeout(t *testing.T) {
	t.Parallel()
	alice, bob, carol := threeParties(t)
	// The party timeout is short enough to fail well inside the wait, and
	// long enough that a loaded machine never stalls carol that long.
	run := alice.submit(t, sleepers("8s", ""), map[string]string{"ledger": ledger(t), "seconds": "60"})
	waitRunning(t, alice, run.ID)
	bob.signal(t, syscall.SIGSTOP)
	done := alice.waitDone(t, run.ID, time.Minute)
	n := nodeOf(t, done, "work")
	if done.Status.Phase != apiv1.PhaseFailed || n.Code != apiv1.CodePartyLost || !strings.Contains(n.Message, "party bob") {
		t.Fatalf("run %s: %s; task %s %s; want Failed with %s naming bob", run.ID, done.Status.Phase, n.Code, n.Message, apiv1.CodePartyLost)
	}
	// The parties that answer stop their shares at once...
	for _, s := range []*fedServer{alice, carol} {
		part := partEnds(t, s, run.ID)
		if pn := nodeOf(t, part, "work"); pn.Phase == apiv1.PhaseRunning || len(pn.Attempts) != 1 || pn.Attempts[0].Phase == apiv1.PhaseRunning {
			t.Errorf("%s's part: task %s, attempts %+v; want its one attempt stopped", s.name, pn.Phase, pn.Attempts)
		}
	}
	// ...and the stopped one as soon as it runs again.
	bob.signal(t, syscall.SIGCONT)
	part := partEnds(t, bob, run.ID)
	if pn := nodeOf(t, part, "work"); len(pn.Attempts) != 1 || pn.Attempts[0].Phase == apiv1.PhaseRunning {
		t.Errorf("bob's part after SIGCONT: attempts %+v; want its attempt stopped", pn.Attempts)
	}
}

func TestFederatedRunCompletesWhenAPartyStopsBriefly(t *testing.T) {
	t.Parallel()
	alice, bob, _ := threeParties(t)
	book := ledger(t)
	run := alice.submit(t, sleepers("20s", ""), map[string]string{"ledger": book, "seconds": "6"})
	waitRunning(t, alice, run.ID)
	bob.signal(t, syscall.SIGSTOP)
	pause(t, 3*time.Second)
	bob.signal(t, syscall.SIGCONT)
	done := alice.waitDone(t, run.ID, time.Minute)
	if done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s: %s %s; shares %s", run.ID, done.Status.Phase, done.Status.Message, shareLine(nodeOf(t, done, "work")))
	}
	if got := ledgerLines(t, book); len(got) != 3 {
		t.Errorf("shares started %v; want three, once each", got)
	}
}

func TestCancelOnTheInitiatorReachesEveryParty(t *testing.T) {
	t.Parallel()
	alice, bob, carol := threeParties(t)
	run := alice.submit(t, sleepers("30s", ""), map[string]string{"ledger": ledger(t), "seconds": "120"})
	waitRunning(t, alice, run.ID)
	if r := alice.kiln(t, "cancel", string(run.ID)); r.code != 0 {
		t.Fatalf("cancel: %s", r.stderr)
	}
	if done := alice.waitDone(t, run.ID, 30*time.Second); done.Status.Phase != apiv1.PhaseCancelled {
		t.Errorf("run %s: %s; want Cancelled", run.ID, done.Status.Phase)
	}
	for _, s := range []*fedServer{alice, bob, carol} {
		part := partEnds(t, s, run.ID)
		pn := nodeOf(t, part, "work")
		if part.Status.Phase != apiv1.PhaseCancelled || len(pn.Attempts) != 1 || pn.Attempts[0].Phase == apiv1.PhaseRunning {
			t.Errorf("%s's part: %s, attempts %+v; want Cancelled with its attempt stopped", s.name, part.Status.Phase, pn.Attempts)
		}
	}
}

func TestAnUnregisteredServerIsRefused(t *testing.T) {
	t.Parallel()
	alice, bob, carol := threeParties(t)
	mallory := startFed(t, "mallory", "127.0.0.4")
	// mallory registers bob on its side with a made-up credential; bob
	// never registered mallory.
	if r := mallory.kiln(t, "party", "add", "bob", "--url", bob.url, "--credential", apiv1.CredentialPrefix+strings.Repeat("0", 64), "--no-check"); r.code != 0 {
		t.Fatalf("mallory's party add bob: %s", r.stderr)
	}
	wf := strings.NewReplacer("guest: [alice]", "guest: [mallory]", "arbiter: [carol]", "arbiter: [mallory]").Replace(sleepers("10s", ""))
	// The initiator asks every party at submit: bob refuses mallory's
	// credential, and nothing is made anywhere.
	r := mallory.kilnStdin(t, wf, "run", "-", "-p", "ledger="+ledger(t))
	if r.code == 0 || !strings.Contains(r.stderr, string(apiv1.CodePartRefused)) || !strings.Contains(r.stderr, "party bob refuses") || !strings.Contains(r.stderr, string(apiv1.CodePartyCredential)) {
		t.Errorf("mallory's submit = exit %d, %s; want %s carrying bob's %s", r.code, r.stderr, apiv1.CodePartRefused, apiv1.CodePartyCredential)
	}
	for _, s := range []*fedServer{mallory, bob} {
		if list := s.kiln(t, "get", "runs"); strings.Contains(list.stdout, "sleepers") {
			t.Errorf("%s holds a run of mallory's refused submission:\n%s", s.name, list.stdout)
		}
	}
	// A federated workflow naming a party its initiator never registered
	// is refused at submit, with the field.
	wf = strings.Replace(sleepers("10s", ""), "arbiter: [carol]", "arbiter: [dave]", 1)
	if r := alice.kilnStdin(t, wf, "run", "-", "-p", "ledger=/tmp/x"); r.code == 0 || !strings.Contains(r.stderr, string(apiv1.CodePartyNotFound)) || !strings.Contains(r.stderr, "spec.federation.roles.arbiter") {
		t.Errorf("submitting with an unregistered party = exit %d, %s; want %s at spec.federation.roles.arbiter", r.code, r.stderr, apiv1.CodePartyNotFound)
	}
	// A registered party sees only the runs it takes part in: carol asking
	// bob for a part of alice's run is told it does not exist.
	run := alice.submit(t, strings.Replace(sleepers("10s", ""), "arbiter: [carol]", "arbiter: [alice]", 1), map[string]string{"ledger": ledger(t), "seconds": "1"})
	alice.waitDone(t, run.ID, time.Minute)
	toBob := carolCredentialAtBob(t, bob, carol)
	code, c, _ := bob.federationCall(t, fmt.Sprintf("/api/v1/federation/parts/%s", run.ID), toBob, "carol")
	if code != http.StatusNotFound || c != apiv1.CodeRunNotFound {
		t.Errorf("carol asking bob for a part of alice's run = %d %s; want 404 %s", code, c, apiv1.CodeRunNotFound)
	}
}

// carolCredentialAtBob is a credential bob issued to carol (any two
// servers), freshly rotated (the first was handed over in federate).
func carolCredentialAtBob(t *testing.T, bob, carol *fedServer) string {
	t.Helper()
	cred := mustIssue(t, bob.kiln(t, "party", "add", carol.name, "--rotate", "--no-check"), bob.name+"'s party add "+carol.name+" --rotate")
	if r := carol.kiln(t, "party", "add", bob.name, "--credential", cred); r.code != 0 {
		t.Fatalf("%s's party add %s --credential: %s", carol.name, bob.name, r.stderr)
	}
	return cred
}

func TestSuspendAndRerunReachEveryParty(t *testing.T) {
	t.Parallel()
	alice, bob, carol := threeParties(t)
	book := ledger(t)
	run := alice.submit(t, sleepers("30s", ""), map[string]string{"ledger": book, "seconds": "6"})
	waitRunning(t, alice, run.ID)
	if r := alice.kiln(t, "suspend", string(run.ID)); r.code != 0 {
		t.Fatalf("suspend: %s", r.stderr)
	}
	// Every party stops its share and waits for the initiator's word.
	for _, s := range []*fedServer{alice, bob, carol} {
		waitFor(t, s.name+"'s share stopped", func() bool {
			pn := nodeOf(t, s.run(t, apiv1.PartID(run.ID, s.name)), "work")
			return len(pn.Attempts) == 1 && pn.Attempts[0].Code == apiv1.CodeShareAborted && pn.Phase == apiv1.PhaseWaiting
		})
	}
	if r := alice.kiln(t, "unsuspend", string(run.ID)); r.code != 0 {
		t.Fatalf("unsuspend: %s", r.stderr)
	}
	if done := alice.waitDone(t, run.ID, time.Minute); done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s after unsuspend: %s %s", run.ID, done.Status.Phase, done.Status.Message)
	}
	want := []string{"alice/1", "alice/2", "bob/1", "bob/2", "carol/1", "carol/2"}
	if got := ledgerLines(t, book); !slices.Equal(got, want) {
		t.Errorf("shares started %v; want each party's attempts 1 and 2 once: %v", got, want)
	}
	// A rerun is a new federated run, with a part at every party.
	r := alice.kiln(t, "rerun", string(run.ID), "--from", "work", "-q")
	if r.code != 0 {
		t.Fatalf("rerun: %s", r.stderr)
	}
	all := runs(t, alice.home)
	i := slices.IndexFunc(all, func(r apiv1.Run) bool { return r.ID != run.ID && r.Federation != nil && !r.Federation.Part })
	if i < 0 {
		t.Fatalf("no rerun of %s at alice: %+v", run.ID, all)
	}
	rerun := all[i]
	for _, s := range []*fedServer{alice, bob, carol} {
		if part := partEnds(t, s, rerun.ID); part.Status.Phase != apiv1.PhaseSucceeded {
			t.Errorf("%s's part of the rerun %s: %s %s", s.name, rerun.ID, part.Status.Phase, part.Status.Message)
		}
	}
	if r := bob.kiln(t, "retry", string(apiv1.PartID(run.ID, "bob"))); r.code == 0 || !strings.Contains(r.stderr, "only its initiator") || !strings.Contains(r.stderr, "kiln rerun") {
		t.Errorf("retrying bob's part at bob = exit %d, %s; want a refusal pointing at the initiator", r.code, r.stderr)
	}
}

// A rerun from a later task reuses each party's own share of the tasks
// before it, runs the rest everywhere, and leaves no room held.
func TestRerunFromALaterTaskReusesEachPartysShare(t *testing.T) {
	t.Parallel()
	alice, bob, _ := threeParties(t)
	book := ledger(t)
	wf := `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: twostep}
spec:
  params: [{name: ledger}]
  federation:
    roles: {guest: [alice], host: [bob], arbiter: [carol]}
  tasks:
  - name: prep
    roles: [guest, host]
    command: [sh, -c, 'echo "prep:$KILN_PARTY" >> {{params.ledger}}']
  - name: work
    roles: [guest, host, arbiter]
    dependsOn: [prep]
    command: [sh, -c, 'echo "work:$KILN_PARTY" >> {{params.ledger}}']
`
	run := alice.submit(t, wf, map[string]string{"ledger": book})
	if done := alice.waitDone(t, run.ID, time.Minute); done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s: %s %s", run.ID, done.Status.Phase, done.Status.Message)
	}
	if r := alice.kiln(t, "rerun", string(run.ID), "--from", "work", "-q"); r.code != 0 {
		t.Fatalf("rerun --from work: %s %s", r.stdout, r.stderr)
	}
	want := []string{"prep:alice", "prep:bob", "work:alice", "work:alice", "work:bob", "work:bob", "work:carol", "work:carol"}
	if got := ledgerLines(t, book); !slices.Equal(got, want) {
		t.Errorf("tasks ran %v; want prep once and work twice at each of its parties: %v", got, want)
	}
	all := runs(t, bob.home)
	i := slices.IndexFunc(all, func(r apiv1.Run) bool { return r.Federation != nil && r.Federation.Run != run.ID })
	if i < 0 {
		t.Fatalf("bob has no part of the rerun: %+v", all)
	}
	part := bob.run(t, all[i].ID)
	if prep := nodeOf(t, part, "prep"); prep.Phase != apiv1.PhaseSucceeded || prep.Reused == nil || prep.Reused.Run != apiv1.PartID(run.ID, "bob") {
		t.Errorf("bob's share prep in the rerun: %s, reused %+v; want reused from his part of %s", prep.Phase, prep.Reused, run.ID)
	}
	// Nothing stays reserved: bob's whole pool (two CPUs) is free for a task of his own.
	if r := bob.kilnStdin(t, "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: whole}\nspec:\n  tasks:\n  - {name: t, command: ['true'], resources: {cpu: '2'}, admissionTimeout: 20s}\n", "run", "-q", "-"); r.code != 0 {
		t.Errorf("a task taking bob's whole pool after the runs: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}
}

// A share that its party's quota can never admit fails the attempt at
// once with KLN-2040, not after the admission timeout; and what the
// initiator learns names the share's need and the quota, never the size
// of the party's machine.
func TestAPartysQuotaRefusesAShareAtOnceAndTellsNothingOfItsMachine(t *testing.T) {
	t.Parallel()
	alice, bob, _ := threeParties(t)
	if r := bob.kilnStdin(t, "apiVersion: kiln.dev/v1alpha1\nkind: ProjectQuota\nmetadata: {name: default}\nspec: {cpu: 100m, borrowing: false}\n", "apply", "-f", "-"); r.code != 0 {
		t.Fatalf("bob's quota: %s", r.stderr)
	}
	wf := strings.Replace(sleepers("30s", "    perParty: {bob: {resources: {cpu: 500m}}}\n"), "admissionTimeout: 20s", "admissionTimeout: 10m", 1)
	start := time.Now()
	run := alice.submit(t, wf, map[string]string{"ledger": ledger(t)})
	done := alice.waitDone(t, run.ID, 2*time.Minute)
	n := nodeOf(t, done, "work")
	if done.Status.Phase != apiv1.PhaseFailed || n.Code != apiv1.CodeQuotaWait || !strings.Contains(n.Message, "party bob") || !strings.Contains(n.Message, "cpu 500m") {
		t.Fatalf("run %s: %s; task %s %s; want Failed with %s naming bob and the share's need", run.ID, done.Status.Phase, n.Code, n.Message, apiv1.CodeQuotaWait)
	}
	if waited := time.Since(start); waited > 5*time.Minute {
		t.Errorf("the refusal took %s: it waited out the admission timeout", waited)
	}
	capacity := bob.kiln(t, "get", "quotas")
	for _, leak := range []string{"free", "holds", "pool has"} {
		if strings.Contains(n.Message, leak) {
			t.Errorf("the initiator was told of bob's machine (%q): %s\n(bob's quotas: %s)", leak, n.Message, capacity.stdout)
		}
	}
}
