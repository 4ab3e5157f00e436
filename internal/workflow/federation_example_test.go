package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

const secureSumDir = "../../examples/federated"

// TestSecureSumExample validates the example, derives each party's part
// and runs the three shares' processes on loopback with the environment
// kiln gives them: each learns the total, none another's private value.
func TestSecureSumExample(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH")
	}
	docs, err := ReadFiles([]string{filepath.Join(secureSumDir, "secure-sum.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	checked, err := CheckDocuments(docs, nil)
	if err != nil {
		t.Fatalf("the example does not validate: %v", err)
	}
	task := checked[0].Plan.Tasks[0]
	if task.Federated == nil || len(task.Federated.Shares) != 3 {
		t.Fatalf("task %s compiled to %+v, want three shares", task.Spec.Name, task.Federated)
	}
	private := map[string]string{"guest": "123456789", "host": "987654321"}
	shares := startShares(t, python, checked[0].Plan.Workflow, task.Federated.Shares, private)
	for _, s := range shares {
		s.check(t, private)
	}
}

// share is one party's process of the example.
type share struct {
	ref     apiv1.ShareRef
	cmd     *exec.Cmd
	out     bytes.Buffer
	outputs string
}

// startShares starts each share's process as its party would run its
// part's task, the guest first (it retries until the host listens), and
// waits for all of them.
func startShares(t *testing.T, python string, wf *apiv1.Workflow, refs []apiv1.ShareRef, private map[string]string) []*share {
	t.Helper()
	script, err := filepath.Abs(filepath.Join(secureSumDir, "secure_sum.py"))
	if err != nil {
		t.Fatal(err)
	}
	peers := make([]apiv1.Peer, len(refs))
	for i, r := range refs {
		peers[i] = apiv1.Peer{Party: r.Party, Role: r.Role, Task: r.Name, Address: freeAddress(t)}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var out []*share
	for i, r := range refs {
		part, _, err := PartOf(wf, r.Party)
		if err != nil {
			t.Fatal(err)
		}
		pt := part.Spec.Tasks[0]
		s := &share{ref: r, outputs: t.TempDir()}
		s.cmd = exec.CommandContext(ctx, python, strings.ReplaceAll(pt.Command[1], "{{params.script}}", script))
		s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
		s.cmd.Env = append(shareEnv(t, pt, peers, i, private[r.Role]), "KILN_OUTPUTS="+s.outputs, "PATH="+os.Getenv("PATH"))
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	for _, s := range out {
		if err := s.cmd.Wait(); err != nil {
			t.Errorf("%s (%s) exited with %v:\n%s", s.ref.Party, s.ref.Role, err, s.out.String())
		}
	}
	return out
}

// shareEnv is the environment of share i: the task's env with its
// secret's value, and what kiln says of the federation. The last share
// reads its peers from the file, the others from the variables.
func shareEnv(t *testing.T, task apiv1.Task, peers []apiv1.Peer, i int, secret string) []string {
	t.Helper()
	var env []string
	for _, e := range task.Env {
		if e.ValueFrom != nil {
			env = append(env, e.Name+"="+secret)
		}
	}
	me := peers[i]
	others := append(append([]apiv1.Peer(nil), peers[:i]...), peers[i+1:]...)
	if i < len(peers)-1 {
		list, _ := json.Marshal(others)
		return append(env, "KILN_PARTY="+me.Party, "KILN_ROLE="+me.Role, "KILN_FEDERATION_ADDRESS="+me.Address, "KILN_FEDERATION_PEERS="+string(list))
	}
	file := filepath.Join(t.TempDir(), "federation.json")
	data, _ := json.Marshal(map[string]any{"party": me.Party, "role": me.Role, "task": me.Task, "address": me.Address, "peers": others})
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return append(env, "KILN_PARTY="+me.Party, "KILN_FEDERATION_FILE="+file)
}

// check asserts the share learnt the total and nothing else.
func (s *share) check(t *testing.T, private map[string]string) {
	t.Helper()
	if !strings.Contains(s.out.String(), "total=1111111110") {
		t.Errorf("%s printed %q, want total=1111111110", s.ref.Role, s.out.String())
	}
	if b, err := os.ReadFile(filepath.Join(s.outputs, "total")); err != nil || string(b) != "1111111110" {
		t.Errorf("%s wrote output total %q (%v), want 1111111110", s.ref.Role, b, err)
	}
	for role, v := range private {
		if role != s.ref.Role && strings.Contains(s.out.String(), v) {
			t.Errorf("%s printed %s's private value: %q", s.ref.Role, role, s.out.String())
		}
	}
}

// freeAddress is a loopback address no one listens on now.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
