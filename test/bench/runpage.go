package main

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// pageItems is the size of the map whose run page and describe are measured.
const pageItems = 10000

// runPage runs a map of 10,000 true items, serves its home with kiln
// serve, and measures what a run page fetches (a page of nodes and the
// last events, gzipped), what a live view's poll costs (the nodes changed
// since its version, the run by its ETag) and kiln describe, each against
// the old way measured in the same run: the whole run and every event,
// and describe printing every event.
func (b *bench) runPage() []row {
	home := filepath.Join(b.dir, "runpage-home")
	file := b.write("runpage", head+fmt.Sprintf("  - {name: prep, command: [\"true\"]}\n  - {name: m, dependsOn: [prep], forEach: {range: {count: %d}}, command: [\"true\"]}\n", pageItems))
	run := exec.Command(b.kiln, "--home", home, "run", "-q", "--cpus", fmt.Sprint(b.cpus), file)
	run.Stderr = os.Stderr
	must(run.Run())
	stopSupervisor(home)
	base, token, stop := serveHome(b.kiln, home)
	defer stop()
	c := fetcher{base: base, token: token}
	var list apiv1.RunList
	c.getJSON("/api/v1/runs?limit=1", &list)
	id := string(list.Items[0].ID)

	oldPage := c.fetch(false, "/api/v1/runs/"+id, "/api/v1/runs/"+id+"/events")
	page := c.fetch(true, "/api/v1/runs/"+id+"?nodes=false", "/api/v1/runs/"+id+"/nodes?parent=", "/api/v1/runs/"+id+"/nodes?parent=m&limit=100",
		"/api/v1/runs/"+id+"/events?tail=100")
	var first apiv1.NodeList
	c.getJSON("/api/v1/runs/"+id+"/nodes?limit=1", &first)
	poll := c.fetch(true, "/api/v1/runs/"+id+"/nodes?sinceVersion="+first.ResourceVersion, "/api/v1/runs/"+id+"?nodes=false#etag")
	oldPoll := c.fetch(false, "/api/v1/runs/"+id)

	describe := b.describe(home, base, token, id)
	oldDescribe := b.describe(home, base, token, id, "--events=-1")
	return []row{
		{
			name: fmt.Sprintf("%d-item map: a run page's fetches (run without nodes, top nodes, 100 items, last 100 events; gzip; raw: whole run + every event)", pageItems),
			kiln: page.String(), raw: oldPage.String(), ratio: fmt.Sprintf("%.4fx bytes", float64(page.bytes)/float64(oldPage.bytes)),
			target: "< 1s", met: page.took < time.Second,
		},
		{
			name: fmt.Sprintf("%d-item map: a live view's poll (nodes changed since its version, the run by ETag; raw: the whole run again)", pageItems),
			kiln: poll.String(), raw: oldPoll.String(), ratio: ratio(poll.took, oldPoll.took),
			target: "< 1s", met: poll.took < time.Second,
		},
		{
			name: fmt.Sprintf("%d-item map: kiln describe over the server (last 20 events; raw: --events=-1, every event)", pageItems),
			kiln: describe.String(), raw: oldDescribe.String(), ratio: ratio(describe.took, oldDescribe.took),
			target: "< 1s", met: describe.took < time.Second,
		},
	}
}

// fetched is what fetches took: their time (the answers read and
// decoded, as a page would), the bytes that came over the wire, and lines
// for a command's output.
type fetched struct {
	took  time.Duration
	bytes int64
	lines int
}

func (f fetched) String() string {
	s := fmt.Sprintf("%s, %s", f.took.Round(time.Millisecond), size(f.bytes))
	if f.lines > 0 {
		s += fmt.Sprintf(", %d lines", f.lines)
	}
	return s
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// fetcher GETs from a kiln serve with a token, counting the bytes sent.
type fetcher struct {
	base, token string
}

// fetch GETs each path one after another, gzip accepted or not; a path
// ending #etag is asked with the ETag of an answer to it fetched first.
func (c *fetcher) fetch(gzip bool, paths ...string) fetched {
	var f fetched
	for _, p := range paths {
		p, conditional := strings.CutSuffix(p, "#etag")
		tag := ""
		if conditional {
			tag = c.get(p, gzip, "", nil).etag
		}
		start := time.Now()
		var v any
		a := c.get(p, gzip, tag, &v)
		f.took += time.Since(start)
		f.bytes += a.bytes
	}
	return f
}

func (c *fetcher) getJSON(path string, out any) { c.get(path, false, "", out) }

type answer struct {
	bytes int64
	etag  string
}

// get GETs path and decodes it into out (unless it is 304), unzipping a
// gzipped answer as a browser would; bytes counts what came over the wire.
func (c *fetcher) get(path string, gzipped bool, ifNoneMatch string, out any) answer {
	req, _ := http.NewRequest("GET", c.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	if ifNoneMatch != "" {
		req.Header.Set("If-None-Match", ifNoneMatch)
	}
	if gzipped {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	must(err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotModified {
		panic(fmt.Sprintf("GET %s: %s", path, resp.Status))
	}
	wire := &counter{r: resp.Body}
	var body io.Reader = wire
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(wire)
		must(err)
		body = zr
	}
	if resp.StatusCode == http.StatusOK && out != nil {
		must(json.NewDecoder(body).Decode(out))
	}
	_, _ = io.Copy(io.Discard, body)
	return answer{bytes: wire.n, etag: resp.Header.Get("ETag")}
}

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// describe times kiln describe of run id over the server, and counts the
// lines and bytes it prints.
func (b *bench) describe(home, base, token, id string, args ...string) fetched {
	cmd := exec.Command(b.kiln, append([]string{"--home", home, "describe", "run", id}, args...)...)
	cmd.Env = append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+token)
	start := time.Now()
	out, err := cmd.Output()
	took := time.Since(start)
	must(err)
	return fetched{took: took, bytes: int64(len(out)), lines: strings.Count(string(out), "\n")}
}
