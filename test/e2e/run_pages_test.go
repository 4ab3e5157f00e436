package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// pagedMap is a map of 300 items, item i failing when i%10 == 3 (the
// map succeeds with half of them), a few at a time so that it is seen
// while it runs.
const pagedMap = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: paged}
spec:
  tasks:
  - {name: prep, command: ["true"]}
  - name: items
    dependsOn: [prep]
    forEach: {range: {count: 300}, maxParallel: 4, minSuccessRatio: 0.5}
    command: [sh, -c, 'test $(( {{item}} % 10 )) -ne 3']
  - {name: report, dependsOn: [items], command: ["true"]}
`

// api is a client of one kiln serve, with its admin token.
type api struct {
	t           *testing.T
	base, token string
}

func (a api) get(path string, out any) int {
	a.t.Helper()
	req, _ := http.NewRequest("GET", a.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			a.t.Fatalf("GET %s: %v: %s", path, err, b)
		}
	}
	return resp.StatusCode
}

// TestARunsNodesAndEventsComeAPageAtATime drives a real kiln serve with
// a map of 300 items: the pages of its nodes hold every node once, the
// filters keep what they say, a live view asking for the nodes changed
// since a version gets exactly those, and kiln describe shows the last
// events and says how many it left out.
func TestARunsNodesAndEventsComeAPageAtATime(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	a := api{t, base, admin}
	req, _ := http.NewRequest("POST", base+"/api/v1/runs", strings.NewReader(pagedMap))
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("submit: %v %v", err, resp)
	}
	var run apiv1.Run
	_ = json.NewDecoder(resp.Body).Decode(&run)
	resp.Body.Close()
	nodesOf := "/api/v1/runs/" + string(run.ID) + "/nodes"

	// A live view: one page of every node while the map runs.
	var live apiv1.NodeList
	waitFor(t, "the map to be half done", func() bool {
		live = apiv1.NodeList{} // decoding into the last answer would keep its fields that this one omits
		a.get(nodesOf+"?limit=5000", &live)
		return live.Counts[apiv1.PhaseSucceeded]+live.Counts[apiv1.PhaseFailed] > 100 && live.Counts[apiv1.PhasePending] > 0
	})
	waitFor(t, "the run to end", func() bool {
		var r apiv1.Run
		a.get("/api/v1/runs/"+string(run.ID)+"?nodes=false", &r)
		return r.Status.Phase.Done() && len(r.Status.Nodes) == 0
	})
	var whole apiv1.Run
	a.get("/api/v1/runs/"+string(run.ID), &whole)
	if whole.Status.Phase != apiv1.PhaseSucceeded || len(whole.Status.Nodes) != 303 {
		t.Fatalf("the run ended %s with %d nodes, want Succeeded with 303", whole.Status.Phase, len(whole.Status.Nodes))
	}

	checkChangedSince(t, a, nodesOf, live, whole)
	checkPages(t, a, nodesOf, whole)
	checkFilters(t, a, nodesOf, whole)
	checkDescribeEvents(t, a, home, run.ID)
}

// checkChangedSince: the nodes changed since the live view's version are
// exactly those whose record differs from the live view's, new ones
// included.
func checkChangedSince(t *testing.T, a api, nodesOf string, live apiv1.NodeList, whole apiv1.Run) {
	t.Helper()
	seen := map[string]string{}
	for _, n := range live.Items {
		b, _ := json.Marshal(n)
		seen[n.Name] = string(b)
	}
	var want []string
	for _, n := range whole.Status.Nodes {
		if b, _ := json.Marshal(n); seen[n.Name] != string(b) {
			want = append(want, n.Name)
		}
	}
	var got []string
	q := "?limit=100&sinceVersion=" + url.QueryEscape(live.ResourceVersion)
	for {
		var page apiv1.NodeList
		if code := a.get(nodesOf+q, &page); code != http.StatusOK {
			t.Fatalf("changed since %s: %d", live.ResourceVersion, code)
		}
		for _, n := range page.Items {
			got = append(got, n.Name)
		}
		if page.Continue == "" {
			break
		}
		q = "?limit=100&sinceVersion=" + url.QueryEscape(live.ResourceVersion) + "&continue=" + url.QueryEscape(page.Continue)
	}
	if len(want) == 0 || len(want) == len(whole.Status.Nodes) || !slices.Equal(got, want) {
		t.Errorf("changed since the live view: %d nodes %v…; want the %d of %d that changed %v…", len(got), got[:min(5, len(got))], len(want), len(whole.Status.Nodes), want[:min(5, len(want))])
	}
	if slices.Contains(got, "prep") {
		t.Errorf("prep had ended before the live view, yet is listed as changed since")
	}
}

// checkPages: pages of 37 hold every node of the run once, in its order.
func checkPages(t *testing.T, a api, nodesOf string, whole apiv1.Run) {
	t.Helper()
	var got []string
	q := "?limit=37"
	for pages := 0; ; pages++ {
		var page apiv1.NodeList
		if code := a.get(nodesOf+q, &page); code != http.StatusOK || pages > 20 {
			t.Fatalf("page %d: %d", pages, code)
		}
		for _, n := range page.Items {
			got = append(got, n.Name)
		}
		if page.RemainingItemCount != len(whole.Status.Nodes)-len(got) {
			t.Errorf("page %d says %d remain, want %d", pages, page.RemainingItemCount, len(whole.Status.Nodes)-len(got))
		}
		if page.Continue == "" {
			break
		}
		q = "?limit=37&continue=" + url.QueryEscape(page.Continue)
	}
	var want []string
	for _, n := range whole.Status.Nodes {
		want = append(want, n.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the pages hold %d nodes, want the run's %d once each, in its order", len(got), len(want))
	}
}

// checkFilters: phase and parent keep exactly the nodes they name.
func checkFilters(t *testing.T, a api, nodesOf string, whole apiv1.Run) {
	t.Helper()
	for _, x := range []struct {
		query string
		keep  func(n apiv1.NodeStatus) bool
	}{
		{"?parent=items&phase=failed", func(n apiv1.NodeStatus) bool { return n.Parent == "items" && n.Phase == apiv1.PhaseFailed }},
		{"?parent=", func(n apiv1.NodeStatus) bool { return n.Parent == "" }},
		{"?phase=Succeeded&limit=5000", func(n apiv1.NodeStatus) bool { return n.Phase == apiv1.PhaseSucceeded }},
	} {
		var page apiv1.NodeList
		a.get(nodesOf+x.query, &page)
		var want, got []string
		for _, n := range whole.Status.Nodes {
			if x.keep(n) {
				want = append(want, n.Name)
			}
		}
		for _, n := range page.Items {
			got = append(got, n.Name)
		}
		if len(want) == 0 || !slices.Equal(got, want) || page.Continue != "" {
			t.Errorf("nodes%s: %d nodes %v…, want %d", x.query, len(got), got[:min(5, len(got))], len(want))
		}
	}
	var items apiv1.NodeList
	a.get(nodesOf+"?parent=items&limit=1", &items)
	if items.Counts[apiv1.PhaseFailed] != 30 || items.Counts[apiv1.PhaseSucceeded] != 270 || items.RemainingItemCount != 299 {
		t.Errorf("the map's items: counts %v, %d remaining after 1; want 30 failed, 270 succeeded, 299", items.Counts, items.RemainingItemCount)
	}
}

// checkDescribeEvents: kiln describe, against the server and on the
// home, shows the last 20 events by default and says how many it left
// out; --events=-1 shows all, --events 5 five.
func checkDescribeEvents(t *testing.T, a api, home string, id apiv1.RunID) {
	t.Helper()
	var tail apiv1.EventList
	a.get("/api/v1/runs/"+string(id)+"/events?tail=1", &tail)
	total := tail.Total
	if total < 600 {
		t.Fatalf("the run has %d events; a map of 300 should have hundreds", total)
	}
	remote := []string{"KILN_SERVER=" + a.base, "KILN_TOKEN=" + a.token}
	for _, x := range []struct {
		env   []string
		args  []string
		shown int
	}{
		{remote, nil, 20},
		{nil, nil, 20},
		{remote, []string{"--events", "5"}, 5},
		{remote, []string{"--events=-1"}, total},
		{nil, []string{"--events=-1"}, total},
	} {
		r := kilnWithEnv(t, x.env, home, append([]string{"describe", "run", string(id)}, x.args...)...)
		_, events, ok := strings.Cut(r.stdout, "\nEvents:\n")
		lines := strings.Split(strings.TrimRight(events, "\n"), "\n")
		note := fmt.Sprintf("  (%d earlier events not shown; kiln describe run %s --events=-1 shows all)", total-x.shown, id)
		if x.shown == total {
			note = ""
		}
		wantLines := x.shown
		if note != "" {
			wantLines++
		}
		if r.code != 0 || !ok || len(lines) != wantLines || (note != "" && lines[len(lines)-1] != note) {
			t.Errorf("describe %v (remote %t): exit %d, %d event lines (last %q); want %d and %q", x.args, x.env != nil, r.code, len(lines), lines[len(lines)-1], wantLines, note)
		}
	}
	if r := kilnWithEnv(t, remote, home, "describe", "run", string(id)); strings.Count(r.stdout, "\n") > 80 {
		t.Errorf("describe of a map of 300 prints %d lines; the map's items should be folded", strings.Count(r.stdout, "\n"))
	}
}
