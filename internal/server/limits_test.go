package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// A body whose Content-Length is over MaxBody is refused before any of
// it is read: here the client sends none of its 50 MB, and the answer
// comes all the same.
func TestABodyTooLargeIsRefusedBeforeItIsRead(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(c *Config) { c.Limits.MaxBody = 1 << 20 })
	const size = 50_000_000
	c := dialServer(t, e)
	start := time.Now()
	fmt.Fprintf(c, "POST /api/v1/runs HTTP/1.1\r\nHost: kiln\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", e.admin, size)
	resp, body := readResponse(t, c)
	t.Logf("a 50 MB body was refused in %v, none of it sent", time.Since(start))
	wantError(t, "a 50 MB submission", resp, body, http.StatusRequestEntityTooLarge, apiv1.CodeBodyTooLarge)

	// Sent for real, the client gets to write only what the sockets hold.
	var sent atomic.Int64
	req, _ := http.NewRequest("POST", e.url+"/api/v1/runs", &countingReader{n: &sent, left: size})
	req.ContentLength = size
	req.Header.Set("Authorization", "Bearer "+e.admin)
	start = time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		wantError(t, "a 50 MB submission sent", resp, b, http.StatusRequestEntityTooLarge, apiv1.CodeBodyTooLarge)
	}
	t.Logf("sending a 50 MB body: %v after %v, %d bytes of it written", err, time.Since(start), sent.Load())
	if sent.Load() >= size/2 {
		t.Errorf("the client wrote %d bytes of %d before the answer, want the server to stop it early", sent.Load(), size)
	}
}

// countingReader gives left zero bytes and counts those read.
type countingReader struct {
	n    *atomic.Int64
	left int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), r.left))
	clear(p[:n])
	r.left -= int64(n)
	r.n.Add(int64(n))
	return n, nil
}

// Submissions beyond MaxSubmits wait a moment for a turn, then are
// refused with 503, Retry-After and KLN-4013; the turns come back.
func TestSubmissionsBeyondMaxSubmitsAre503(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(c *Config) { c.Limits.MaxSubmits, c.Limits.SubmitWait = 2, 50*time.Millisecond })
	half := len(workflowYAML) / 2
	var slow []net.Conn
	for range 2 { // two submissions whose bodies are half sent hold both turns
		c := dialServer(t, e)
		fmt.Fprintf(c, "POST /api/v1/runs HTTP/1.1\r\nHost: kiln\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s",
			e.admin, len(workflowYAML), workflowYAML[:half])
		slow = append(slow, c)
	}
	eventually(t, "both turns to be taken", func() bool { return e.srv.submits.busy() == 2 })
	resp, b := e.do(t, "POST", "/api/v1/runs", e.admin, workflowYAML)
	wantError(t, "a third submission at once", resp, b, http.StatusServiceUnavailable, apiv1.CodeBusy)
	if got := resp.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	for _, c := range slow {
		if _, err := io.WriteString(c, workflowYAML[half:]); err != nil {
			t.Fatal(err)
		}
		if resp, b := readResponse(t, c); resp.StatusCode != http.StatusCreated {
			t.Errorf("a slow submission, once sent: %d %s", resp.StatusCode, b)
		}
	}
	e.submit(t, e.admin, "")
}

// A body that trickles in is cut off at the read timeout with 408, and
// gives back its turn; headers that trickle in lose the connection.
func TestSlowRequestsAreCutOff(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(c *Config) { c.Limits.ReadTimeout, c.Limits.ReadHeaderTimeout = time.Second, time.Second })
	body := dialServer(t, e)
	fmt.Fprintf(body, "POST /api/v1/runs HTTP/1.1\r\nHost: kiln\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s",
		e.admin, len(workflowYAML), workflowYAML[:10])
	resp, b := readResponse(t, body)
	wantError(t, "a body that stopped", resp, b, http.StatusRequestTimeout, apiv1.CodeBadRequest)
	if err := readUntilClosed(body); !errors.Is(err, io.EOF) {
		t.Errorf("the connection of a body that stopped: %v, want it closed", err)
	}
	eventually(t, "the turn to be given back", func() bool { return e.srv.submits.busy() == 0 })

	headers := dialServer(t, e)
	_, _ = io.WriteString(headers, "GET /api/v1/runs HTTP/1.1\r\nHost: ki")
	if err := readUntilClosed(headers); !errors.Is(err, io.EOF) {
		t.Errorf("the connection of headers that stopped: %v, want it closed", err)
	}
}

func dialServer(t *testing.T, e *env) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// readResponse reads one response from c, waiting at most a minute.
func readResponse(t *testing.T, c net.Conn) (*http.Response, []byte) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}
