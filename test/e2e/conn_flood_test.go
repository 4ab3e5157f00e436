package e2e

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestIdleConnectionFloodLeavesRoom fills kiln serve's connections with
// idle ones from 20 addresses, each within the per-address bound and
// together twice the total: /healthz and an admin's requests must all be
// answered meanwhile, each on a new connection.
func TestIdleConnectionFloodLeavesRoom(t *testing.T) {
	t.Parallel()
	const total, perClient, addresses = 200, 20, 20
	base, admin, _ := startServeAs(t, newHome(t), nil, nil, "--isolation", "none",
		"--max-conns", "200", "--max-conns-per-client", "20")
	addr := strings.TrimPrefix(base, "http://")
	for i := range addresses {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 3, byte(i+1))}, Timeout: 10 * time.Second}
		for range perClient {
			c, err := d.DialContext(t.Context(), "tcp", addr)
			if errors.Is(err, syscall.ECONNRESET) {
				continue // refused at once: the flood is what is tested, not its dials
			}
			if err != nil {
				t.Fatalf("dialing from 127.0.3.%d (Linux routes all of 127/8 to lo): %v", i+1, err)
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	answered := 0
	for range 30 {
		for _, req := range []struct{ path, token string }{{"/healthz", ""}, {"/api/v1/runs", admin}} {
			r, _ := http.NewRequest("GET", base+req.path, nil)
			if req.token != "" {
				r.Header.Set("Authorization", "Bearer "+req.token)
			}
			resp, err := fresh.Do(r)
			if err != nil {
				t.Errorf("GET %s during the flood: %v", req.path, err)
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s during the flood: %s", req.path, resp.Status)
				continue
			}
			answered++
		}
	}
	t.Logf("%d of 60 probes answered with %d idle connections offered for %d places", answered, addresses*perClient, total)
}
