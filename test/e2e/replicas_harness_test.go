package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"kiln.dev/kiln/client"
)

// replicaSet is several kiln serve replicas on one PostgreSQL database.
// On the local backend they share one home (one machine: its supervisor
// holds the attempts); on Kubernetes each may have its own.
type replicaSet struct {
	dsn      string
	env      []string
	token    string
	replicas []*replica
}

// replicaOptions shape a replicaSet.
type replicaOptions struct {
	// ownHomes gives each replica a home of its own, as on other machines.
	ownHomes bool
	// config is written to each home's config.yaml.
	config string
	// args are added to each kiln serve.
	args []string
}

// replica is one kiln serve of a replicaSet, kept at its address across
// restarts.
type replica struct {
	home   string
	addr   string
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
	waited error         // what waiting for cmd returned, once exited is closed
	paused bool          // stopped with SIGSTOP: its /readyz would not answer
	mu     sync.Mutex
	stderr strings.Builder
	stdout strings.Builder // after its "kiln serving on" line
	api    *client.Client
}

// startReplicas starts n replicas on dsn, one after another (the first
// writes the admin token the others use), each on a free port.
func startReplicas(t *testing.T, dsn string, n int, o replicaOptions) *replicaSet {
	t.Helper()
	rs := &replicaSet{dsn: dsn}
	keys := t.TempDir()
	rs.env = append(os.Environ(), "KILN_STORE="+dsn, "KILN_SECRET_KEY_FILE="+filepath.Join(keys, "secret.key"))
	var home string
	for range n {
		if home == "" || o.ownHomes {
			home = replicaHome(t, o.config)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		r := &replica{home: home, addr: l.Addr().String()}
		l.Close()
		rs.replicas = append(rs.replicas, r)
		rs.start(t, r, o.args...)
	}
	return rs
}

// replicaHome makes a home with config as its config.yaml, reachable by
// tasks running as project accounts.
func replicaHome(t *testing.T, config string) string {
	t.Helper()
	home := newHome(t)
	for dir := filepath.Dir(home); dir != os.TempDir(); dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	if config != "" {
		writeFile(t, home, "config.yaml", config)
	}
	return home
}

// start starts r's kiln serve and waits until it listens.
func (rs *replicaSet) start(t *testing.T, r *replica, extra ...string) {
	t.Helper()
	args := append([]string{"--home", r.home, "serve", "--addr", r.addr}, extra...)
	cmd := exec.Command(kilnBin, args...)
	cmd.Env = rs.env
	r.mu.Lock()
	r.stderr.Reset()
	r.mu.Unlock()
	cmd.Stderr = &lockedWriter{r: r}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	listening := false
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "kiln serving on ") {
			listening = true
			break
		}
	}
	if !listening {
		_ = cmd.Wait()
		t.Fatalf("replica at %s never listened: %s", r.addr, r.errors())
	}
	r.mu.Lock()
	r.stdout.Reset()
	r.mu.Unlock()
	go func() { _, _ = io.Copy(&lockedWriter{r: r, out: true}, out) }()
	r.cmd, r.exited = cmd, make(chan struct{})
	go func() { r.waited = cmd.Wait(); close(r.exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-r.exited })
	if rs.token == "" {
		raw, err := os.ReadFile(filepath.Join(r.home, "admin.token"))
		if err != nil {
			t.Fatal(err)
		}
		rs.token = strings.TrimSpace(string(raw))
	}
	r.api = client.New("http://"+r.addr, rs.token)
}

// lockedWriter writes to r's stderr, or stdout, under its lock.
type lockedWriter struct {
	r   *replica
	out bool
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	if w.out {
		return w.r.stdout.Write(p)
	}
	return w.r.stderr.Write(p)
}

// output waits until r has printed want, and returns what it printed.
func (r *replica) output(t *testing.T, want string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r.mu.Lock()
		out := r.stdout.String()
		r.mu.Unlock()
		if strings.Contains(out, want) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica at %s did not print %q within %s; it printed:\n%s", r.addr, want, within, out)
		}
		pause(t, 50*time.Millisecond)
	}
}

// errors returns what r wrote to stderr.
func (r *replica) errors() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stderr.String()
}

// alive reports whether r's process has not exited.
func (r *replica) alive() bool {
	select {
	case <-r.exited:
		return false
	default:
		return true
	}
}

// kill9 kills r at once, as a crash would.
func (r *replica) kill9() {
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.exited
}

// view is what one replica's /readyz says about the leadership.
type view struct {
	term   int64
	holder string
	leads  bool
}

var leaderLine = regexp.MustCompile(`(?m)^leader: (\S+) at (\S+), term (\d+),`)

// readyz asks r who leads.
func (r *replica) readyz(ctx context.Context) (view, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.addr+"/readyz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return view{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return view{}, fmt.Errorf("readyz: %s: %s", resp.Status, body)
	}
	var v view
	if m := leaderLine.FindSubmatch(body); m != nil {
		v.holder = string(m[1])
		v.term, _ = strconv.ParseInt(string(m[3]), 10, 64)
	}
	v.leads = strings.Contains(string(body), "\nrole: leader\n")
	return v, nil
}

// leader waits, up to 30s (twice the longest takeover the replicas
// promise), until a live replica says it leads under a term above after,
// and returns it with its term.
func (rs *replicaSet) leader(t *testing.T, after int64) (*replica, int64) {
	t.Helper()
	const within = 30 * time.Second
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		for _, r := range rs.replicas {
			if !r.alive() || r.paused {
				continue
			}
			if v, err := r.readyz(t.Context()); err == nil && v.leads && v.term > after {
				return r, v.term
			}
		}
		pause(t, 20*time.Millisecond)
	}
	t.Fatalf("no replica led under a term above %d within %s", after, within)
	return nil, 0
}

// any returns a live replica's client, starting from the i-th.
func (rs *replicaSet) any(i int) *client.Client {
	for k := range rs.replicas {
		if r := rs.replicas[(i+k)%len(rs.replicas)]; r.alive() {
			return r.api
		}
	}
	return rs.replicas[0].api
}
