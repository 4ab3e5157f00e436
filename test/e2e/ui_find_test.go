package e2e

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// listedRuns is a script that lists the run IDs of the runs list, in order.
const listedRuns = `[...document.querySelectorAll("#runs tbody tr[data-run]")].map((tr) => tr.dataset.run)`

// shownRows is a script that counts the rows of the runs list, once it
// shows the runs of its filters (not those of the filters before, dimmed).
const shownRows = `document.querySelectorAll("#runs:not(.loading) tbody tr[data-run]").length`

// shownFor is a script that is true once the runs list shows the rows of
// an API query holding part: a hash change reaches the list a moment
// after the address, and until then the old filters' rows are shown.
func shownFor(part string) string {
	return `(document.querySelector("#runs:not(.loading)")?.dataset.query || "").includes(` + strconv.Quote(part) + `)`
}

// TestWebUIFindsRuns filters the runs list by name, phase, label and
// project, pages through it by the API's cursors, and checks that each
// view's address brings it back: on a reload, and with Back. The
// search, the order and the time range narrow the list and stay in its
// address.
func TestWebUIFindsRuns(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	wf := func(name, label, command string) string {
		return "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: " + name + ", labels: {team: " + label + "}}\n" +
			"spec:\n  tasks:\n  - {name: only, command: [" + command + "]}\n"
	}
	var ids []apiv1.RunID // oldest first
	for _, r := range [][3]string{{"alpha", "red", `"true"`}, {"alpha", "red", `"true"`}, {"beta", "blue", `"true"`}, {"gamma", "blue", `"false"`}} {
		ids = append(ids, postRun(t, base, admin, wf(r[0], r[1], r[2])).ID)
	}
	other := postRunAs(t, base, admin, "other", wf("delta", "red", `"true"`)).ID
	ids = append(ids, other)
	for _, id := range ids {
		waitAPIRun(t, base, admin, id, "run "+string(id)+" to end", func(r apiv1.Run) bool { return r.Status.Phase.Done() })
	}
	newest := slices.Clone(ids)
	slices.Reverse(newest)

	var all, byName, byPhase, byLabel, byProject, reloaded, back []string
	var nameField, hash string
	list := func(into *[]string) chromedp.Action { return chromedp.Evaluate(listedRuns, into) }
	settle := func(n int) chromedp.Action {
		return waitJS(shownRows + ` === ` + strconv.Itoa(n))
	}
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/?token="+admin+"#/"),
		settle(5), list(&all),
		chromedp.SendKeys(`#filters input[name=name]`, "alpha\n"),
		settle(2), list(&byName),
		chromedp.Evaluate(`location.hash`, &hash),
		chromedp.Navigate(base+"/#/?phase=Failed"),
		settle(1), list(&byPhase),
		chromedp.Navigate(base+"/#/?label=team%3Dblue"),
		settle(2), list(&byLabel),
		clearField(`#filters input[name=label]`),
		chromedp.SendKeys(`#filters input[name=project]`, "other\n"),
		settle(1), list(&byProject),
		shot(t, "kiln-ui-find-project.png"),
		chromedp.Navigate(base+"/#/?name=alpha"),
		chromedp.Reload(),
		settle(2), list(&reloaded),
		chromedp.Value(`#filters input[name=name]`, &nameField),
		chromedp.NavigateBack(),
		settle(1), list(&back),
	)
	if !slices.Equal(all, idStrings(newest)) {
		t.Errorf("the list shows %v, want every run newest first %v", all, newest)
	}
	if !slices.Equal(byName, idStrings(newest[3:5])) || !strings.Contains(hash, "name=alpha") {
		t.Errorf("name alpha shows %v at %s, want %v and the name in the address", byName, hash, newest[3:5])
	}
	if !slices.Equal(byPhase, []string{string(ids[3])}) {
		t.Errorf("phase Failed shows %v, want %s", byPhase, ids[3])
	}
	if !slices.Equal(byLabel, idStrings([]apiv1.RunID{ids[3], ids[2]})) {
		t.Errorf("label team=blue shows %v, want %v", byLabel, ids[2:4])
	}
	if !slices.Equal(byProject, []string{string(other)}) {
		t.Errorf("project other shows %v, want %s", byProject, other)
	}
	if !slices.Equal(reloaded, byName) || nameField != "alpha" {
		t.Errorf("after a reload the list shows %v with the name field %q, want %v and alpha", reloaded, nameField, byName)
	}
	if !slices.Equal(back, byProject) {
		t.Errorf("Back shows %v, want the project's list %v", back, byProject)
	}
	findByPage(ctx, t, base, newest)
	findBySearch(ctx, t, base, ids)
}

// findByPage pages through every run two at a time, Older then Newer.
func findByPage(ctx context.Context, t *testing.T, base string, newest []apiv1.RunID) {
	var first, second, third, secondAgain, again []string
	var nextOff bool
	var shown string // the first run of the page shown last
	page := func(into *[]string, want int) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			rows := `document.querySelectorAll("#runs:not(.loading) tbody tr[data-run]")`
			if err := waitJS(rows + `.length === ` + strconv.Itoa(want) + ` && ` + rows + `[0]?.dataset.run !== "` + shown + `"`).Do(ctx); err != nil {
				return err
			}
			if err := chromedp.Evaluate(listedRuns, into).Do(ctx); err != nil {
				return err
			}
			shown = (*into)[0]
			return nil
		})
	}
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/#/?limit=2"),
		page(&first, 2),
		chromedp.Click(`#pager .next`), waitJS(`location.hash.includes("cursor=")`), page(&second, 2),
		chromedp.Click(`#pager .next`), page(&third, 1),
		chromedp.Evaluate(`document.querySelector("#pager .next").disabled`, &nextOff),
		shot(t, "kiln-ui-find-last-page.png"),
		chromedp.Click(`#pager .prev`), page(&secondAgain, 2),
		chromedp.Click(`#pager .prev`), waitJS(`!location.hash.includes("cursor=")`), page(&again, 2),
	)
	got := slices.Concat(first, second, third)
	if !slices.Equal(got, idStrings(newest)) || !nextOff {
		t.Errorf("paging two at a time shows %v (Older disabled at the end: %v), want %v", got, nextOff, newest)
	}
	if !slices.Equal(secondAgain, second) || !slices.Equal(again, first) {
		t.Errorf("Newer twice shows %v then %v, want the second page %v then the first %v", secondAgain, again, second, first)
	}
}

// findBySearch searches, orders and bounds the list in time: the address
// holds each, and the list is as they say.
func findBySearch(ctx context.Context, t *testing.T, base string, ids []apiv1.RunID) {
	var searched, oldest, recent []string
	var hash, query string
	tomorrow := time.Now().Add(24 * time.Hour).Format("2006-01-02T15:04") // a date as one types it, in the browser's zone
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/#/"),
		chromedp.WaitVisible(`#filters input[name=q]`),
		chromedp.SendKeys(`#filters input[name=q]`, "gam\n"),
		waitJS(`location.hash.includes("q=gam")`),
		waitJS(shownFor("q=gam")),
		chromedp.Evaluate(listedRuns, &searched),
		clearField(`#filters input[name=q]`),
		chromedp.SetValue(`#filters select[name=order]`, "asc"),
		chromedp.Click(`#filters button`),
		waitJS(`location.hash.includes("order=asc")`),
		waitJS(shownFor("order=asc")),
		chromedp.Evaluate(listedRuns, &oldest),
		chromedp.Navigate(base+"/#/?since=1h&until="+tomorrow),
		waitJS(shownFor("since=1h")),
		chromedp.Evaluate(listedRuns, &recent),
		chromedp.Evaluate(`location.hash`, &hash),
		chromedp.Evaluate(`listQuery(parseHash().list).toString()`, &query),
	)
	if v, _ := url.ParseQuery(strings.TrimPrefix(hash, "#/?")); v.Get("since") != "1h" {
		t.Errorf("the address %s lost the time range", hash)
	}
	if v, _ := url.ParseQuery(query); v.Get("since") != "1h" || !strings.HasPrefix(v.Get("until"), tomorrow[:8]) || !strings.HasSuffix(v.Get("until"), "Z") {
		t.Errorf("the API query for since 1h and a date is %q, want the duration as typed and the date in RFC 3339", query)
	}
	if len(recent) != 5 {
		t.Errorf("created since an hour ago shows %v, want all five", recent)
	}
	if !slices.Equal(searched, []string{string(ids[3])}) {
		t.Errorf("searching gam shows %v, want %s", searched, ids[3])
	}
	if !slices.Equal(oldest, idStrings(ids)) {
		t.Errorf("oldest first shows %v, want %v", oldest, ids)
	}
}

func idStrings(ids []apiv1.RunID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}
