package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/local"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/sqlite"
)

// seededRuns is how many finished runs the list benchmark pages through.
const seededRuns = 100_000

// server seeds the store, starts kiln serve as its own process and drives
// it with wrk from another: /healthz is the baseline of the same run.
func (b *bench) server() []row {
	home := filepath.Join(b.dir, "server-home")
	seed(home, seededRuns)
	// The server's speed is measured, not its policies: one token drives
	// it from one address, far past the default rate limits, and tasks
	// need no isolation (the benchmark's home is in a private directory).
	base, token, stop := serveHome(b.kiln, home)
	defer stop()
	auth := "Authorization: Bearer " + token

	health := wrk(b.dir, base+"/healthz", auth, "")
	list := wrk(b.dir, base+"/api/v1/runs?limit=50", auth, "")
	filtered := wrk(b.dir, base+"/api/v1/runs?limit=50&phase=failed,cancelled&since=12h&q=nightly", auth, "")
	team := wrk(b.dir, base+"/api/v1/runs?limit=50&label="+url.QueryEscape("team=vision"), auth, "")
	rare := wrk(b.dir, base+"/api/v1/runs?limit=50&phase=failed,succeeded&label="+url.QueryEscape("release=rc,team notin (infra)"), auth, "")
	negative := wrk(b.dir, base+"/api/v1/runs?limit=50&label="+url.QueryEscape("!release"), auth, "")
	scrape := wrk(b.dir, base+"/metrics", auth, "")
	submit := wrk(b.dir, base+"/api/v1/runs", auth, `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: load}
spec: {runtimeRef: {name: plain}, suspend: true, trainer: {command: ["true"], resourcesPerNode: {cpu: 100m}}}
`)
	healthP99 := health.p99.String() + " p99 (healthz)"
	return []row{
		{name: "HTTP baseline: GET /healthz (wrk, 8 connections)", kiln: health.String(), target: "(baseline)", met: true},
		{
			name: fmt.Sprintf("list a page of 50 of %d runs", seededRuns), kiln: list.String(), raw: healthP99,
			ratio: ratio(list.p99, health.p99), target: "p99 < 20ms", met: list.p99 < 20*time.Millisecond && list.errors == 0,
		},
		listRow(fmt.Sprintf("list a filtered page of 50 of %d runs (2 phases, since, search)", seededRuns), filtered, health),
		listRow(fmt.Sprintf("list a page of 50 of %d runs by label team=vision (1 in 5)", seededRuns), team, health),
		listRow(fmt.Sprintf("list a page of 50 of %d runs by label release=rc,team notin (infra) and 2 phases (1 in 1,000)", seededRuns), rare, health),
		listRow(fmt.Sprintf("list a page of 50 of %d runs by label !release (all but 1 in 1,000)", seededRuns), negative, health),
		{
			name: fmt.Sprintf("GET /metrics with %d runs", seededRuns), kiln: scrape.String(), raw: healthP99,
			ratio: ratio(scrape.p99, health.p99), target: "p99 <= 10ms", met: scrape.p99 <= 10*time.Millisecond && scrape.errors == 0,
		},
		{
			name: fmt.Sprintf("submit a (suspended) TrainJob, %d runs stored", seededRuns), kiln: submit.String(), raw: fmt.Sprintf("%.0f/s (healthz)", health.rate),
			target: ">= 1000/s", met: submit.rate >= 1000 && submit.errors == 0,
		},
	}
}

// listRow is the row of a page of the runs list, beside healthz's p99 of
// the same run.
func listRow(name string, l, health load) row {
	return row{
		name: name, kiln: l.String(), raw: health.p99.String() + " p99 (healthz)",
		ratio: ratio(l.p99, health.p99), target: "p99 <= 20ms", met: l.p99 <= 20*time.Millisecond && l.errors == 0,
	}
}

// seed writes n finished runs straight into the store, spread over a day:
// one in 7 is of a workflow named train-nightly, one in 10 Failed and one
// in 25 Cancelled, so that a filtered list keeps a few of them. Each has
// a label team (vision on one in 5, infra on one in 5), and one in 1,000
// the label release=rc.
func seed(home string, n int) {
	must(os.MkdirAll(home, 0o755))
	s, err := sqlite.Open(context.Background(), filepath.Join(home, "kiln.db"), sqlite.Options{})
	must(err)
	defer s.Close()
	start := time.Now().Add(-24 * time.Hour)
	wf := &apiv1.Workflow{Metadata: apiv1.ObjectMeta{Name: "seeded"}}
	for i := range n {
		run := apiv1.Run{
			ID: apiv1.RunID(fmt.Sprintf("seeded-%06d", i)), Name: seededName(i), Kind: apiv1.KindWorkflow, Workflow: wf,
			CreatedAt: start.Add(time.Duration(i) * time.Second), Status: apiv1.RunStatus{Phase: seededPhase(i)},
			Labels: map[string]string{"team": []string{"vision", "nlp", "audio", "speech", "infra"}[i%5]},
		}
		if i%1000 == 7 {
			run.Labels["release"] = "rc"
		}
		must(s.CreateRun(context.Background(), store.CreateRunParams{Run: run, Nodes: []string{"t"}}))
	}
}

func seededName(i int) string {
	if i%7 == 0 {
		return "train-nightly"
	}
	return "seeded"
}

func seededPhase(i int) apiv1.Phase {
	switch {
	case i%10 == 3:
		return apiv1.PhaseFailed
	case i%25 == 4:
		return apiv1.PhaseCancelled
	}
	return apiv1.PhaseSucceeded
}

// load is what wrk measured.
type load struct {
	rate   float64
	p99    time.Duration
	errors int
}

func (l load) String() string {
	s := fmt.Sprintf("%.0f/s, p99 %s", l.rate, l.p99.Round(10*time.Microsecond))
	if l.errors > 0 {
		s += fmt.Sprintf(", %d errors", l.errors)
	}
	return s
}

// wrk runs wrk for 8 seconds with 2 threads and 8 connections; a body
// makes the requests POSTs.
func wrk(dir, url, header, body string) load {
	args := []string{"-t2", "-c8", "-d8s", "--latency", "-H", header}
	if body != "" {
		script := filepath.Join(dir, "post.lua")
		must(os.WriteFile(script, []byte("wrk.method = \"POST\"\nwrk.body = [["+body+"]]\n"), 0o644))
		args = append(args, "-s", script)
	}
	args = append(args, url)
	out, err := exec.Command("wrk", args...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "wrk: %v\n%s", err, out)
		os.Exit(2)
	}
	text := string(out)
	var l load
	if m := regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`).FindStringSubmatch(text); m != nil {
		l.rate, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := regexp.MustCompile(`\n\s+99%\s+([0-9.]+[a-z]+)`).FindStringSubmatch(text); m != nil {
		l.p99, _ = time.ParseDuration(strings.Replace(m[1], "us", "µs", 1))
	}
	if m := regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`).FindStringSubmatch(text); m != nil {
		l.errors, _ = strconv.Atoi(m[1])
	}
	return l
}

// serveHome starts kiln serve on home, its limits lifted (its speed is
// measured, not its policies), and returns its address, its admin token
// and what stops it.
func serveHome(kiln, home string) (string, string, func()) {
	serve := exec.Command(kiln, "--home", home, "serve", "--addr", "127.0.0.1:0",
		"--isolation", "none", "--rate", "-1", "--client-rate", "-1")
	serve.Stderr = os.Stderr
	out, err := serve.StdoutPipe()
	must(err)
	must(serve.Start())
	stop := func() {
		_ = serve.Process.Signal(syscall.SIGTERM)
		_ = serve.Wait()
		if pid := local.SupervisorPID(home); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	base := ""
	lines := bufio.NewScanner(out)
	for base == "" && lines.Scan() {
		if addr, ok := strings.CutPrefix(lines.Text(), "kiln serving on "); ok {
			base = addr
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	raw, err := os.ReadFile(filepath.Join(home, "admin.token"))
	must(err)
	return base, strings.TrimSpace(string(raw)), stop
}
