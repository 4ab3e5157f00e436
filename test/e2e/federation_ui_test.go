package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// The web UI of the initiator draws a federated task as one node with a
// lane per party's share, and a party's UI shows its part as a part.
func TestWebUIShowsAFederatedRunWithALanePerParty(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	alice, bob, _ := threeParties(t)
	run := alice.submit(t, secureSum(t), secureSumParams(t))
	if done := alice.waitDone(t, run.ID, 2*time.Minute); done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s: %s %s", run.ID, done.Status.Phase, done.Status.Message)
	}
	bobPart := apiv1.PartID(run.ID, "bob")
	bob.waitDone(t, bobPart, 30*time.Second)
	lane := func(party, role string) string {
		return `g.node[data-name="secure-sum"] .party-lane[data-party="` + party + `"][data-role="` + role + `"]`
	}
	var mark, header, panel, bobHeader string
	var png []byte
	err := chromedp.Run(ctx,
		chromedp.Navigate(alice.url+"/?token="+tokenOf(alice)+"#/"),
		chromedp.WaitVisible(`tr[data-run="`+string(run.ID)+`"] .fed-mark[data-fed="run"]`),
		chromedp.Text(`tr[data-run="`+string(run.ID)+`"] .fed-mark`, &mark),
		chromedp.Navigate(alice.url+"/#/runs/"+string(run.ID)),
		chromedp.Poll(`document.querySelector('`+lane("carol", "arbiter")+`[data-state="Succeeded"]') !== null`, nil, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.Poll(`document.querySelectorAll('g.node[data-name="secure-sum"] .party-lane[data-state="Succeeded"]').length === 3`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Text(`#federation`, &header),
		chromedp.Click(`g.node[data-name="secure-sum"] rect`),
		chromedp.WaitVisible(`#parties tr.party-share[data-party="bob"][data-role="host"][data-state="Succeeded"]`),
		chromedp.Text(`#parties`, &panel),
		chromedp.FullScreenshot(&png, 100),
		chromedp.Navigate(bob.url+"/?token="+tokenOf(bob)+"#/runs/"+string(bobPart)),
		chromedp.WaitVisible(`#federation.part .part-of`),
		chromedp.Text(`#federation.part .part-of`, &bobHeader),
	)
	if err != nil {
		t.Fatalf("driving the UI: %v", err)
	}
	if !strings.Contains(mark, "federated") {
		t.Errorf("the runs list marks the run %q; want federated", mark)
	}
	if !strings.Contains(header, "initiated by alice") || !strings.Contains(header, "arbiter: carol") {
		t.Errorf("the run header says %q; want the initiator and the roles", header)
	}
	for _, want := range []string{"alice", "bob", "carol", "127.0.0.2:"} {
		if !strings.Contains(panel, want) {
			t.Errorf("the shares panel lacks %q: %q", want, panel)
		}
	}
	if !strings.Contains(bobHeader, string(run.ID)) || !strings.Contains(bobHeader, "initiated by alice") {
		t.Errorf("bob's page of his part says %q; want the run and its initiator", bobHeader)
	}
	saveShot(t, "kiln-ui-federated.png", png)
}

// tokenOf is the admin token s's clients use.
func tokenOf(s *fedServer) string {
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "KILN_TOKEN="); ok {
			return v
		}
	}
	return ""
}
