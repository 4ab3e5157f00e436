package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// mapRun saves a running run, owned by an engine elsewhere, of tasks
// prep, items (a map) and report, with n items: item i is Failed when
// i%10 == 3, Running when i%10 == 5, else Succeeded.
func (e *env) mapRun(t *testing.T, id apiv1.RunID, n int) {
	t.Helper()
	st := e.srv.cfg.Store
	now := time.Now().UTC()
	err := st.CreateRun(t.Context(), store.CreateRunParams{
		Run:   apiv1.Run{ID: id, Name: "mapped", Kind: apiv1.KindWorkflow, Project: "default", CreatedAt: now, Workflow: &apiv1.Workflow{}},
		Nodes: []string{"prep", "items", "report"}, Kinds: []apiv1.NodeKind{apiv1.NodeKindCommand, apiv1.NodeKindMap, apiv1.NodeKindCommand},
		Owner: "elsewhere", LeaseUntil: now.Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	var added []apiv1.NodeStatus
	for i := range n {
		added = append(added, apiv1.NodeStatus{Name: itemName(i), Parent: "items", Kind: apiv1.NodeKindCommand, Phase: itemPhase(i)})
	}
	e.apply(t, &store.Change{
		Run: id, Owner: "elsewhere", Status: &apiv1.RunStatus{Phase: apiv1.PhaseRunning}, Added: added,
		Nodes: []apiv1.NodeStatus{{Name: "prep", Phase: apiv1.PhaseSucceeded}, {Name: "items", Phase: apiv1.PhaseRunning, Kind: apiv1.NodeKindMap}},
	})
}

func (e *env) apply(t *testing.T, c *store.Change) {
	t.Helper()
	if err := e.srv.cfg.Store.Apply(t.Context(), c); err != nil {
		t.Fatal(err)
	}
}

func itemName(i int) string { return fmt.Sprintf("items.%d", i) }

func itemPhase(i int) apiv1.Phase {
	switch i % 10 {
	case 3:
		return apiv1.PhaseFailed
	case 5:
		return apiv1.PhaseRunning
	}
	return apiv1.PhaseSucceeded
}

// nodes gets a page of nodes; it fails the test unless the answer is 200.
func (e *env) nodes(t *testing.T, id apiv1.RunID, query string) apiv1.NodeList {
	t.Helper()
	resp, b := e.do(t, "GET", "/api/v1/runs/"+string(id)+"/nodes?"+query, e.viewer, "")
	var list apiv1.NodeList
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &list) != nil {
		t.Fatalf("nodes?%s: %d %s", query, resp.StatusCode, b)
	}
	return list
}

func TestNodePagesCoverEveryNodeOnceInOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mapRun(t, "paged", 250)
	var names []string
	q, pages, version := "limit=40", 0, ""
	for {
		page := e.nodes(t, "paged", q)
		pages++
		if version == "" {
			version = page.ResourceVersion
		}
		if page.ResourceVersion != version {
			t.Errorf("page %d has resourceVersion %s, the first %s", pages, page.ResourceVersion, version)
		}
		for _, n := range page.Items {
			names = append(names, n.Name)
		}
		if want := 253 - len(names); page.RemainingItemCount != want {
			t.Errorf("page %d: remainingItemCount %d, want %d", pages, page.RemainingItemCount, want)
		}
		if page.Continue == "" {
			break
		}
		q = "limit=40&continue=" + url.QueryEscape(page.Continue)
	}
	want := []string{"prep", "items", "report"}
	for i := range 250 {
		want = append(want, itemName(i))
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("pages hold %d nodes %v…, want each of the run's %d once, in its order", len(names), names[:min(8, len(names))], len(want))
	}
	if pages != 7 {
		t.Errorf("%d pages of 40 for 253 nodes, want 7", pages)
	}
}

func TestNodesFilterByPhaseAndParent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mapRun(t, "filtered", 100)
	failed := e.nodes(t, "filtered", "parent=items&phase=FAILED,running")
	if len(failed.Items) != 20 {
		t.Fatalf("failed or running items: %d, want 20", len(failed.Items))
	}
	for _, n := range failed.Items {
		if n.Parent != "items" || (n.Phase != apiv1.PhaseFailed && n.Phase != apiv1.PhaseRunning) {
			t.Errorf("node %s (%s, parent %q) does not pass the filter", n.Name, n.Phase, n.Parent)
		}
	}
	wantCounts := map[apiv1.Phase]int{apiv1.PhaseSucceeded: 80, apiv1.PhaseFailed: 10, apiv1.PhaseRunning: 10}
	if fmt.Sprint(failed.Counts) != fmt.Sprint(wantCounts) {
		t.Errorf("counts of the map's items = %v, want %v", failed.Counts, wantCounts)
	}
	top := e.nodes(t, "filtered", "parent=")
	if len(top.Items) != 3 || top.Items[1].Name != "items" || top.Counts[apiv1.PhasePending] != 1 {
		t.Errorf("the top of the run = %+v, want prep, items, report (report pending)", top)
	}
	resp, b := e.do(t, "GET", "/api/v1/runs/filtered/nodes?phase=done", e.viewer, "")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), string(apiv1.CodeUnknownPhase)) || !strings.Contains(string(b), "Skipped") {
		t.Errorf("an unknown phase: %d %s, want 400 %s naming the node phases", resp.StatusCode, b, apiv1.CodeUnknownPhase)
	}
}

func TestNodesSinceAVersionAreThoseThatChanged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mapRun(t, "live", 60)
	first := e.nodes(t, "live", "limit=10")
	if none := e.nodes(t, "live", "sinceVersion="+first.ResourceVersion); len(none.Items) != 0 {
		t.Fatalf("since the first page, with nothing changed: %d nodes", len(none.Items))
	}
	e.apply(t, &store.Change{Run: "live", Owner: "elsewhere", Nodes: []apiv1.NodeStatus{
		{Name: itemName(5), Phase: apiv1.PhaseSucceeded, Kind: apiv1.NodeKindCommand},
		{Name: itemName(15), Phase: apiv1.PhaseFailed, Kind: apiv1.NodeKindCommand, Message: "exit 1"},
	}, Added: []apiv1.NodeStatus{{Name: itemName(60), Parent: "items", Phase: apiv1.PhaseRunning}}})
	changed := e.nodes(t, "live", "sinceVersion="+url.QueryEscape(first.ResourceVersion))
	var got []string
	for _, n := range changed.Items {
		got = append(got, n.Name+"="+string(n.Phase))
	}
	if want := "items.5=Succeeded items.15=Failed items.60=Running"; strings.Join(got, " ") != want {
		t.Errorf("changed since %s: %v, want %s", first.ResourceVersion, got, want)
	}
	if changed.ResourceVersion == first.ResourceVersion {
		t.Errorf("the version did not move: %s", changed.ResourceVersion)
	}
	if again := e.nodes(t, "live", "sinceVersion="+changed.ResourceVersion); len(again.Items) != 0 {
		t.Errorf("since the changes were read: %d nodes", len(again.Items))
	}
	failedSince := e.nodes(t, "live", "phase=failed&sinceVersion="+first.ResourceVersion)
	if len(failedSince.Items) != 1 || failedSince.Items[0].Name != itemName(15) {
		t.Errorf("failed since the first page: %+v, want items.15", failedSince.Items)
	}
}

func TestNodesRefuseVersionsAndTokensTheyDidNotGive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mapRun(t, "strict", 30)
	page := e.nodes(t, "strict", "limit=5")
	for _, x := range []struct {
		query  string
		status int
		code   apiv1.Code
	}{
		{"sinceVersion=0123-4", http.StatusGone, apiv1.CodeStaleVersion},
		{"sinceVersion=nonsense", http.StatusGone, apiv1.CodeStaleVersion},
		{"continue=zzz", http.StatusBadRequest, apiv1.CodeBadContinue},
		{"limit=5&phase=failed&continue=" + url.QueryEscape(page.Continue), http.StatusBadRequest, apiv1.CodeBadContinue},
		{"limit=0", http.StatusBadRequest, apiv1.CodeBadRequest},
		{"limit=5001", http.StatusBadRequest, apiv1.CodeBadRequest},
	} {
		resp, b := e.do(t, "GET", "/api/v1/runs/strict/nodes?"+x.query, e.viewer, "")
		if resp.StatusCode != x.status || !strings.Contains(string(b), string(x.code)) {
			t.Errorf("nodes?%s: %d %s, want %d %s", x.query, resp.StatusCode, b, x.status, x.code)
		}
	}
	resp, b := e.do(t, "GET", "/api/v1/runs/strict/nodes?sinceVersion=999", e.viewer, "")
	if resp.StatusCode != http.StatusGone || !strings.Contains(string(b), string(apiv1.CodeStaleVersion)) || !strings.Contains(string(b), "past this run's nodes' version "+page.ResourceVersion) {
		t.Errorf("a version past the run's: %d %s, want 410 %s", resp.StatusCode, b, apiv1.CodeStaleVersion)
	}
	if resp, _ := e.do(t, "GET", "/api/v1/runs/strict/nodes", e.none, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a token: %d, want 401", resp.StatusCode)
	}
}

// raw sends a GET with headers and no transparent gzip: what a browser
// is sent.
func (e *env) raw(t *testing.T, path string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.viewer)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestPolledAnswersCarryETagsAndGzip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mapRun(t, "polled", 200)
	for _, path := range []string{"/api/v1/runs/polled", "/api/v1/runs/polled/nodes?parent=items", "/api/v1/runs/polled/events", "/api/v1/runs"} {
		plain, body := e.raw(t, path, nil)
		tag := plain.Header.Get("ETag")
		if plain.StatusCode != http.StatusOK || !strings.HasPrefix(tag, `W/"`) || plain.Header.Get("Content-Encoding") != "" {
			t.Fatalf("%s: %d, ETag %q, encoding %q", path, plain.StatusCode, tag, plain.Header.Get("Content-Encoding"))
		}
		same, b := e.raw(t, path, map[string]string{"If-None-Match": tag})
		if same.StatusCode != http.StatusNotModified || len(b) != 0 {
			t.Errorf("%s with its ETag: %d, %d bytes; want 304 and none", path, same.StatusCode, len(b))
		}
		zipped, zb := e.raw(t, path, map[string]string{"Accept-Encoding": "gzip, deflate"})
		if len(body) < gzipAbove {
			continue
		}
		if zipped.Header.Get("Content-Encoding") != "gzip" || zipped.Header.Get("ETag") != tag || len(zb) >= len(body) {
			t.Errorf("%s gzipped: encoding %q, ETag %q (want %s), %d bytes of %d", path, zipped.Header.Get("Content-Encoding"), zipped.Header.Get("ETag"), tag, len(zb), len(body))
			continue
		}
		zr, err := gzip.NewReader(bytes.NewReader(zb))
		if err != nil {
			t.Fatal(err)
		}
		if unzipped, _ := io.ReadAll(zr); !bytes.Equal(unzipped, body) {
			t.Errorf("%s: the gzipped body is not the plain one", path)
		}
	}
	_, before := e.raw(t, "/api/v1/runs/polled", nil)
	tag := etagOf(before)
	e.apply(t, &store.Change{Run: "polled", Owner: "elsewhere", Nodes: []apiv1.NodeStatus{{Name: itemName(5), Phase: apiv1.PhaseSucceeded}}})
	changed, _ := e.raw(t, "/api/v1/runs/polled", map[string]string{"If-None-Match": tag})
	if changed.StatusCode != http.StatusOK || changed.Header.Get("ETag") == tag {
		t.Errorf("after a change, with the old ETag: %d, ETag %s; want 200 and a new one", changed.StatusCode, changed.Header.Get("ETag"))
	}
	if refused, _ := e.raw(t, "/api/v1/runs/polled", map[string]string{"Accept-Encoding": "gzip;q=0"}); refused.Header.Get("Content-Encoding") != "" {
		t.Errorf("gzip;q=0 was answered gzipped")
	}
}

func TestARunWithoutItsNodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mapRun(t, "slim", 50)
	_, b := e.do(t, "GET", "/api/v1/runs/slim?nodes=false", e.viewer, "")
	var run apiv1.Run
	if err := json.Unmarshal(b, &run); err != nil || run.ID != "slim" || len(run.Status.Nodes) != 0 || run.Status.Phase != apiv1.PhaseRunning {
		t.Errorf("run without nodes: %v %s", err, b)
	}
	_, b = e.do(t, "GET", "/api/v1/runs/slim", e.viewer, "")
	if err := json.Unmarshal(b, &run); err != nil || len(run.Status.Nodes) != 53 {
		t.Errorf("the whole run has %d nodes, want 53", len(run.Status.Nodes))
	}
}

func TestEventsTailAndPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mapRun(t, "told", 1)
	var events []apiv1.Event
	for i := range 30 {
		events = append(events, apiv1.Event{Node: itemName(0), Phase: apiv1.PhaseRunning, Reason: fmt.Sprint("E", i), Time: time.Now()})
	}
	e.apply(t, &store.Change{Run: "told", Owner: "elsewhere", Events: events})
	var all apiv1.EventList
	_, b := e.do(t, "GET", "/api/v1/runs/told/events", e.viewer, "")
	if err := json.Unmarshal(b, &all); err != nil || len(all.Items) != 31 || all.Total != 0 {
		t.Fatalf("every event: %d (total %d), want 31 and no total: %v", len(all.Items), all.Total, err)
	}
	var tail apiv1.EventList
	_, b = e.do(t, "GET", "/api/v1/runs/told/events?tail=5", e.viewer, "")
	if err := json.Unmarshal(b, &tail); err != nil || len(tail.Items) != 5 || tail.Total != 31 || tail.Items[0].Reason != "E25" || tail.Items[4].Reason != "E29" {
		t.Errorf("tail 5: %s", b)
	}
	var seen []string
	q := "limit=8"
	for pages := 0; ; pages++ {
		var page apiv1.EventList
		_, b = e.do(t, "GET", "/api/v1/runs/told/events?"+q, e.viewer, "")
		if err := json.Unmarshal(b, &page); err != nil || page.Total != 31 || pages > 4 {
			t.Fatalf("page %d: %v %s", pages, err, b)
		}
		for _, ev := range page.Items {
			seen = append(seen, ev.Reason)
		}
		if page.Continue == "" {
			break
		}
		q = "limit=8&continue=" + page.Continue
	}
	if len(seen) != 31 || seen[0] != "Submitted" || seen[30] != "E29" {
		t.Errorf("pages of 8 hold %v, want every event once", seen)
	}
	resp, b := e.do(t, "GET", "/api/v1/runs/told/events?limit=8&continue=x1", e.viewer, "")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), string(apiv1.CodeBadContinue)) {
		t.Errorf("a bad continue: %d %s", resp.StatusCode, b)
	}
}
