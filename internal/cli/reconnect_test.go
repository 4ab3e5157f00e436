package cli

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/client"
)

// A watcher whose server never comes back gives up after its patience
// with exit 3, saying once that it lost the server and then that the run
// may still be going and how to re-attach, not to check the URL.
func TestAWatcherGivesUpOnALostServerWithExit3(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	var stderr bytes.Buffer
	e := &env{server: base, stderr: &stderr, stdout: &bytes.Buffer{}}
	w := &watcher{e: e, runs: client.New(base, "kln_x"), quiet: true, seq: map[apiv1.RunID]int64{}}
	p := patient(e, w.runs, []apiv1.RunID{"wf-1"})
	p.patience = 300 * time.Millisecond
	w.runs = p
	_, err = w.watch(t.Context(), []apiv1.RunID{"wf-1"})
	var ee *exitError
	out := stderr.String()
	if !errors.As(err, &ee) || ee.code != exitServerLost {
		t.Fatalf("watch = %v, want exit %d", err, exitServerLost)
	}
	if strings.Count(out, "lost the connection to the server at "+base+"; retrying") != 1 ||
		strings.Count(out, "KLN-5060") != 1 || !strings.Contains(out, "the runs may still be going") ||
		!strings.Contains(out, "kiln watch wf-1 re-attaches") || strings.Contains(out, "check the URL") {
		t.Errorf("stderr:\n%s", out)
	}
}
