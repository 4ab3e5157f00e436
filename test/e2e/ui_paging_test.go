package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// exchange is one request a counting proxy passed on, and its answer.
type exchange struct {
	method, path, query, encoding string
	status, bytes                 int
}

// countingProxy passes requests to a kiln server and keeps what each
// cost: the bytes of its answer's body as sent (compressed, if it was).
type countingProxy struct {
	mu   sync.Mutex
	seen []exchange
}

// countingWriter counts the bytes of an answer's body.
type countingWriter struct {
	http.ResponseWriter
	status, bytes int
}

func (w *countingWriter) WriteHeader(s int) { w.status = s; w.ResponseWriter.WriteHeader(s) }

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.bytes += n
	return n, err
}

func (w *countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// start serves the proxy to base; it answers the proxy's address.
func (c *countingProxy) start(t *testing.T, base string) string {
	t.Helper()
	to, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(to)
	rp.FlushInterval = -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &countingWriter{ResponseWriter: w, status: http.StatusOK}
		rp.ServeHTTP(cw, r)
		c.mu.Lock()
		e := exchange{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, encoding: w.Header().Get("Content-Encoding")}
		e.status, e.bytes = cw.status, cw.bytes
		c.seen = append(c.seen, e)
		c.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// since is what the proxy passed on from the i-th exchange on.
func (c *countingProxy) since(i int) []exchange {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]exchange(nil), c.seen[min(i, len(c.seen)):]...)
}

func (c *countingProxy) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// apiCost sums the requests to the API among seen and their bytes.
func apiCost(seen []exchange) (requests, bytes, notModified int) {
	for _, e := range seen {
		if strings.HasPrefix(e.path, "/api/") {
			requests++
			bytes += e.bytes
			if e.status == http.StatusNotModified {
				notModified++
			}
		}
	}
	return
}

// TestWebUIPagesALiveMap opens the run page of a live map of 500 items
// through a proxy that counts what the page asks for: the page reads the
// run without its nodes, its top nodes and then only what changed, never
// the whole run; answers are gzipped and an idle poll is a 304. The map's
// node shows the counts the API gives as its items end, and its panel
// pages through the items and filters them by phase. It logs what the
// first ten seconds cost (an open page pulled 2.3 MB in 10 s before).
func TestWebUIPagesALiveMap(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	gate := filepath.Join(sharedDir(t), "gate")
	run := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: live-map}
spec:
  tasks:
  - name: prep
    command: ["true"]
  - name: sweep
    dependsOn: [prep]
    forEach: {range: {count: 500}, maxParallel: 10}
    command: [sh, -c, 'if [ {{item}} -ge 200 ]; then while [ ! -e `+gate+` ]; do sleep 0.1; done; fi']
  - name: report
    dependsOn: [sweep]
    command: ["true"]
`)
	t.Cleanup(func() {
		_ = os.WriteFile(gate, nil, 0o644)
		waitServed(t, base, admin, run.ID, "")
	})
	proxy := &countingProxy{}
	front := proxy.start(t, base)
	sweep := `#graph g.node[data-name="sweep"]`
	opened := time.Now()
	err := chromedp.Run(ctx,
		chromedp.Navigate(front+"/?token="+admin+"#/runs/"+string(run.ID)),
		chromedp.Poll(`document.querySelector('`+sweep+`.group') !== null`, nil, chromedp.WithPollingTimeout(60*time.Second)))
	if err != nil {
		t.Fatalf("opening the run's page: %v", err)
	}
	// Ten seconds of the open page while the map runs: a measurement for
	// the log, not a timed assertion.
	select { // a window to measure, not a wait for a state
	case <-ctx.Done():
		t.Fatal("the browser's time ran out")
	case <-time.After(10*time.Second - time.Since(opened)):
	}
	first := proxy.since(0)
	requests, bytes, notModified := apiCost(first)
	t.Logf("the run page of a live 500-item map, its first 10 s: %d API requests (%d answered 304), %d bytes (%.1f KB)",
		requests, notModified, bytes, float64(bytes)/1024)

	// The map comes to rest: 200 items done, the next ones waiting on the gate; the
	// page shows the counts the API gives, and polls at rest cost 304s.
	counts := func(c *apiv1.ChildCounts) string {
		s := fmt.Sprintf("sweep%d/%d ✓", c.Succeeded, c.Total)
		for _, k := range []struct {
			n    int
			sign string
		}{{c.Failed, "✗"}, {c.Running, "▶"}, {c.Pending, "○"}, {c.Skipped, "↷"}, {c.Cancelled, "⊘"}} {
			if k.n > 0 {
				s += fmt.Sprintf(" %d %s", k.n, k.sign)
			}
		}
		return s
	}
	var last apiv1.ChildCounts
	defer func() {
		if t.Failed() {
			t.Logf("the map's counts last read: %+v", last)
		}
	}()
	rest := waitAPIRun(t, base, admin, run.ID, "the map to come to rest", func(r apiv1.Run) bool {
		c := nodeOf(t, &r, "sweep").Children
		if c != nil {
			last = *c
		}
		return c != nil && c.Succeeded == 200 && c.Running > 0 && c.Running+c.Pending == 300 // as many run as the backend has slots
	})
	want := counts(nodeOf(t, &rest, "sweep").Children)
	nRunning := nodeOf(t, &rest, "sweep").Children.Running
	var shown string
	var atRest []byte
	err = chromedp.Run(ctx,
		chromedp.Poll(`document.querySelector('`+sweep+`').textContent === `+jsString(want), nil, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.TextContent(sweep, &shown),
		chromedp.FullScreenshot(&atRest, 100))
	if err != nil {
		t.Fatalf("the map's node reads %q; want %q as the API counts: %v", shown, want, err)
	}
	saveShot(t, "kiln-ui-live-map-rest.png", atRest)
	// A poll finds nothing new once the last item's start is written: it
	// is then every request a 304 (up to ten polls to get there).
	var idleRequests, idleBytes, idle304 int
	for range 10 {
		mark := proxy.count()
		refreshed(ctx, t)
		idleRequests, idleBytes, idle304 = apiCost(proxy.since(mark))
		if idleRequests > 0 && idle304 == idleRequests {
			break
		}
	}
	t.Logf("a poll at rest: %d API requests, %d answered 304, %d bytes", idleRequests, idle304, idleBytes)
	if idleRequests == 0 || idle304 != idleRequests {
		t.Errorf("polls of a run at rest: %d requests, %d of them 304; want every one 304", idleRequests, idle304)
	}

	// The map's panel: a page of 50 items, the next page, and its
	// running items alone.
	var page1, page2, running, item string
	var rows1, rows2, rowsRunning int
	var panelShot []byte
	err = chromedp.Run(ctx,
		chromedp.Click(sweep+" rect.box", chromedp.NodeVisible),
		chromedp.Poll(`document.querySelectorAll("#children tr[data-name]").length === 50`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Text("#panel .items-range", &page1),
		chromedp.Evaluate(`document.querySelectorAll("#children tr[data-name]").length`, &rows1),
		chromedp.Click("#panel button.items-next"),
		chromedp.Poll(`document.querySelector("#panel .items-range").textContent.startsWith("51")`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Text("#panel .items-range", &page2),
		chromedp.Evaluate(`document.querySelectorAll("#children tr[data-name]").length`, &rows2),
		chromedp.SetValue("#items-phase", "Running"),
		chromedp.Evaluate(`document.getElementById("items-phase").dispatchEvent(new Event("change"))`, nil),
		chromedp.Poll(`[...document.querySelectorAll("#children tr[data-name]")].every((r) => r.dataset.phase === "Running") && document.querySelector("#panel .items-range").textContent.startsWith("1–")`, nil,
			chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Text("#panel .items-range", &running),
		chromedp.Evaluate(`document.querySelectorAll("#children tr[data-name]").length`, &rowsRunning),
		chromedp.FullScreenshot(&panelShot, 100),
		// A running item's own panel, which follows the item.
		chromedp.Evaluate(`document.querySelector("#children tr[data-name] a").dataset.select`, &item),
		chromedp.Evaluate(`window.item = document.querySelector("#children tr[data-name] a").dataset.select`, nil),
		chromedp.Click(`#children tr[data-name] a`),
		chromedp.Poll(`document.querySelector("#panel")?.dataset.node === window.item && document.querySelector("#panel h3 .phase.Running") !== null`, nil,
			chromedp.WithPollingTimeout(30*time.Second)),
	)
	if err != nil {
		t.Fatalf("paging the map's items in its panel: %v", err)
	}
	saveShot(t, "kiln-ui-live-map-panel.png", panelShot)
	if wantRunning := fmt.Sprintf("1–%d of %d", nRunning, nRunning); page1 != "1–50 of 500" || rows1 != 50 || page2 != "51–100 of 500" || rows2 != 50 ||
		running != wantRunning || rowsRunning != nRunning {
		t.Errorf("the panel's pages read %q (%d rows), %q (%d rows), running %q (%d rows); want 1–50, 51–100 of 500 and %s running",
			page1, rows1, page2, rows2, running, rowsRunning, wantRunning)
	}

	// The gate opens: every item ends, and the page says so as the API does.
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitServed(t, base, admin, run.ID, apiv1.PhaseSucceeded)
	done, _ := apiRun(t, base, admin, run.ID)
	want = counts(nodeOf(t, &done, "sweep").Children)
	var itemPhase string
	var endShot []byte
	err = chromedp.Run(ctx,
		chromedp.Poll(`document.querySelector('`+sweep+`').textContent === `+jsString(want), nil, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.TextContent(sweep, &shown),
		chromedp.Poll(`document.querySelector("#panel h3 .phase.Succeeded") !== null`, nil, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.Text("#panel h3 .phase", &itemPhase),
		chromedp.FullScreenshot(&endShot, 100))
	saveShot(t, "kiln-ui-live-map-end.png", endShot)
	if err != nil || want != "sweep500/500 ✓" || itemPhase != "Succeeded" {
		t.Errorf("at the end the map's node reads %q and the API counts %q, item %s's panel says %q; want 500/500 ✓ and Succeeded (%v)",
			shown, want, item, itemPhase, err)
	}

	all := proxy.since(0)
	runPath := "/api/v1/runs/" + string(run.ID)
	gzipped := 0
	for _, e := range all {
		if e.encoding == "gzip" {
			gzipped++
		}
		if e.method == http.MethodGet && e.path == runPath && !strings.Contains(e.query, "nodes=false") {
			t.Errorf("the page fetched the whole run: GET %s?%s (%d bytes)", e.path, e.query, e.bytes)
		}
		if strings.HasPrefix(e.path, "/api/") && e.status == http.StatusOK && e.bytes >= 1024 && e.encoding != "gzip" {
			t.Errorf("GET %s?%s answered %d bytes not gzipped", e.path, e.query, e.bytes)
		}
	}
	if gzipped == 0 {
		t.Errorf("no answer of the %d the page asked for came gzipped; want its large ones gzipped", len(all))
	}
}
