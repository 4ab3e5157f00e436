package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A flood of idle connections from one address takes no more than that
// address's share: the rest are closed as soon as they are accepted,
// /healthz still answers another address, and the timeouts close the
// connections that were let in, as they do an idle kept-alive one.
func TestConnectionFloodFromOneAddress(t *testing.T) {
	t.Parallel()
	const perClient, flood = 20, 300
	e := newEnvWith(t, func(c *Config) {
		c.Limits.MaxConnsPerClient = perClient
		c.Limits.ReadHeaderTimeout = 2 * time.Second
		c.Limits.IdleTimeout = 2 * time.Second
	})
	addr := strings.TrimPrefix(e.url, "http://")
	attacker := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 10 * time.Second}
	ends := make(chan error, flood)
	for range flood {
		c, err := attacker.DialContext(t.Context(), "tcp", addr)
		if errors.Is(err, syscall.ECONNRESET) {
			ends <- err // refused so soon that the dial saw it
			continue
		}
		if err != nil {
			t.Fatalf("dialing from 127.0.0.2 (Linux routes all of 127/8 to lo): %v", err)
		}
		t.Cleanup(func() { _ = c.Close() })
		go func() { ends <- readUntilClosed(c) }()
	}

	// Meanwhile 127.0.0.1 is served, on a connection it keeps alive.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: kiln\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz from 127.0.0.1 during the flood: %v %v, want 200", resp, err)
	}
	_ = resp.Body.Close()
	if resp, b := e.do(t, "GET", "/api/v1/runs", e.viewer, ""); resp.StatusCode != http.StatusOK {
		t.Errorf("listing runs from 127.0.0.1 during the flood: %d %s", resp.StatusCode, b)
	}
	open, fromFlood, refused := e.ln.counts("127.0.0.2")
	t.Logf("during the flood: %d connections open, %d of them from 127.0.0.2; %d refused", open, fromFlood, refused)
	if fromFlood > perClient {
		t.Errorf("%d connections open from 127.0.0.2, want at most %d", fromFlood, perClient)
	}

	var reset, closed int
	for range flood {
		switch err := <-ends; {
		case errors.Is(err, syscall.ECONNRESET):
			reset++ // refused: closed with a reset as soon as accepted
		case errors.Is(err, io.EOF):
			closed++ // let in, then closed by the header timeout
		default:
			t.Errorf("a connection of the flood ended with %v, want the server to close it", err)
		}
	}
	_, _, refused = e.ln.counts("127.0.0.2")
	t.Logf("of %d connections from 127.0.0.2, %d were refused at once and %d closed by the header timeout", flood, reset, closed)
	if reset != refused || reset+closed != flood || closed < perClient {
		t.Errorf("%d reset and %d closed by the server, which refused %d; want %d in all, at least %d let in",
			reset, closed, refused, flood, perClient)
	}
	if err := readUntilClosed(c); !errors.Is(err, io.EOF) {
		t.Errorf("an idle kept-alive connection ended with %v, want the idle timeout to close it", err)
	}
	eventually(t, "every connection to be given back", func() bool {
		open, _, _ := e.ln.counts("")
		return open == 0
	})
}

// At MaxConns in all, a new connection takes the place of the one that
// has waited longest without a request, and only when every connection
// is serving one is a new one closed at once.
func TestConnectionsBeyondTheTotalTakeTheOldestIdlePlace(t *testing.T) {
	t.Parallel()
	const total = 5
	e := newEnvWith(t, func(c *Config) {
		c.Limits.MaxConns, c.Limits.MaxConnsPerClient = total, -1
	})
	addr := strings.TrimPrefix(e.url, "http://")
	var held []net.Conn
	for range total {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
		eventually(t, "the server to accept the connection", func() bool {
			open, _, _ := e.ln.counts("")
			return open == len(held)
		})
	}
	if err := getHealth(addr); err != nil {
		t.Fatalf("/healthz at the total, with every connection idle: %v, want it answered", err)
	}
	if err := readUntilClosed(held[0]); !errors.Is(err, io.EOF) {
		t.Errorf("the oldest idle connection ended with %v, want it closed to make room", err)
	}

	// Every place serving a request: an editor's submission whose body
	// has not all come. A new connection is then closed at once.
	eventually(t, "the probe's connection to be given back", func() bool {
		open, _, _ := e.ln.counts("")
		return open == total-1
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	held[0] = c
	for _, c := range held {
		req := "POST /api/v1/runs HTTP/1.1\r\nHost: kiln\r\nAuthorization: Bearer " + e.editorA +
			"\r\nContent-Type: application/yaml\r\nContent-Length: 1000\r\n\r\napiVersion: "
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "every connection to serve a request", func() bool {
		e.ln.mu.Lock()
		defer e.ln.mu.Unlock()
		busy := 0
		for c := range e.ln.conns {
			busy += c.busy
		}
		return busy == total
	})
	if err := getHealth(addr); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("a connection beyond %d in all, every one serving a request: %v, want it reset", total, err)
	}
	_ = held[1].Close()
	eventually(t, "a connection to be let in once one closed", func() bool { return getHealth(addr) == nil })
}

// Idle connections from many addresses, each within its own share, fill
// the total; /healthz and a token's requests are still answered, and a
// connection that presented a token outlives the flood's.
func TestIdleFloodFromManyAddressesLeavesRoom(t *testing.T) {
	t.Parallel()
	const total, perClient, addresses = 60, 10, 12 // 120 idle connections offered for 60 places
	e := newEnvWith(t, func(c *Config) {
		c.Limits.MaxConns, c.Limits.MaxConnsPerClient = total, perClient
	})
	addr := strings.TrimPrefix(e.url, "http://")

	kept, err := net.Dial("tcp", addr) // a client that keeps its connection alive
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	keptReader := bufio.NewReader(kept)
	askRuns := func() error {
		_, err := io.WriteString(kept, "GET /api/v1/runs HTTP/1.1\r\nHost: kiln\r\nAuthorization: Bearer "+e.viewer+"\r\n\r\n")
		if err != nil {
			return err
		}
		resp, err := http.ReadResponse(keptReader, nil)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New(resp.Status)
		}
		return nil
	}
	if err := askRuns(); err != nil {
		t.Fatal(err)
	}

	flood(t, addr, addresses, perClient)
	for i := range 20 {
		if err := getHealth(addr); err != nil {
			t.Fatalf("/healthz probe %d during the flood: %v", i, err)
		}
		if resp, b := e.do(t, "GET", "/api/v1/runs", e.admin, ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("an admin's request %d during the flood: %d %s", i, resp.StatusCode, b)
		}
	}
	if err := askRuns(); err != nil {
		t.Errorf("the kept-alive connection that presented a token was closed for the flood: %v", err)
	}
	if open, _, _ := e.ln.counts(""); open > total {
		t.Errorf("%d connections open, want at most %d", open, total)
	}
}

// flood opens perClient idle connections from each of n loopback
// addresses (127.0.2.1, ...) to addr; they close when the test ends.
func flood(t *testing.T, addr string, n, perClient int) {
	t.Helper()
	for i := range n {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 2, byte(i+1))}, Timeout: 10 * time.Second}
		for range perClient {
			c, err := d.DialContext(t.Context(), "tcp", addr)
			if err != nil {
				t.Fatalf("dialing from 127.0.2.%d (Linux routes all of 127/8 to lo): %v", i+1, err)
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}
}

// getHealth asks for /healthz on a new connection.
func getHealth(addr string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: kiln\r\nConnection: close\r\n\r\n"); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// readUntilClosed reads c until it fails, for at most a minute, and
// returns why it stopped: io.EOF if the server closed it, a reset if it
// refused it, a timeout if it did neither.
func readUntilClosed(c net.Conn) error {
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			return err
		}
	}
}

// eventually waits, for at most a minute, until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); <-time.After(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestClientKey(t *testing.T) {
	t.Parallel()
	for remote, want := range map[string]string{
		"127.0.0.2:5000":             "127.0.0.2",
		"[::ffff:192.0.2.7]:80":      "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:443": "2001:db8:1:2::/64",
		"[fe80::1%eth0]:22":          "fe80::/64",
		"not an address":             "not an address",
		"[2001:db8:1:3:3:4:5:6]:443": "2001:db8:1:3::/64",
	} {
		if got := clientKey(remote); got != want {
			t.Errorf("clientKey(%q) = %q, want %q", remote, got, want)
		}
	}
}
