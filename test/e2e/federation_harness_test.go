package e2e

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/client"
)

// fedServer is one party of a federation test: a kiln serve with its own
// home, token store and loopback address, which it keeps across a
// restart (the other parties know it by that URL).
type fedServer struct {
	partyServer
	addr string
	cmd  *exec.Cmd
	api  *client.Client
	wrap []string // runs kiln serve through it (ip netns exec NS)
	args []string // more flags of kiln serve
}

// startFed starts party name's server on ip (127.0.0.x: each party on an
// address of its own) at a free port.
func startFed(t *testing.T, name, ip string) *fedServer {
	t.Helper()
	return startFedWith(t, name, ip)
}

// startFedWith starts party name's server on ip with more flags of kiln
// serve.
func startFedWith(t *testing.T, name, ip string, args ...string) *fedServer {
	t.Helper()
	s := &fedServer{addr: freeAddr(t, ip), args: args}
	s.name, s.home = name, newHome(t)
	s.start(t)
	return s
}

// freeAddr is a free port on ip, as host:port.
func freeAddr(t *testing.T, ip string) string {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("loopback address %s is not usable here: %v", ip, err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startFedAt starts party name's server at addr, through wrap (such as
// ip netns exec NS) if given.
func startFedAt(t *testing.T, name, addr string, wrap []string) *fedServer {
	t.Helper()
	s := &fedServer{addr: addr, wrap: wrap}
	s.name, s.home = name, newHome(t)
	s.start(t)
	return s
}

func (s *fedServer) start(t *testing.T) {
	t.Helper()
	base, admin, cmd := startServeIn(t, s.wrap, s.home, nil, nil, append([]string{"--party", s.name, "--addr", s.addr}, s.args...)...)
	s.url, s.cmd = base, cmd
	s.env = append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	s.api = client.New(base, admin)
}

// kill9 kills the server at once, as a crash would; its tasks run on
// under their supervisor.
func (s *fedServer) kill9(t *testing.T) {
	t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_ = s.cmd.Wait()
}

// restart starts the killed server again on its home and address.
func (s *fedServer) restart(t *testing.T) { t.Helper(); s.start(t) }

// signal sends sig to the server (SIGSTOP, SIGCONT).
func (s *fedServer) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// openPolicy lets a party's parts run any command and read the secret
// the tests' workflows read: the tests of policies set their own.
var openPolicy = []string{"--allow-command", "*", "--allow-secret", "private-value"}

// federate has every pair of servers register each other, each with the
// credential the other issued to it, and the open policy.
func federate(t *testing.T, servers ...*fedServer) {
	t.Helper()
	for i, a := range servers {
		for _, b := range servers[i+1:] {
			toB := mustIssue(t, a.kiln(t, append([]string{"party", "add", b.name, "--url", b.url}, openPolicy...)...), a.name+"'s party add "+b.name)
			toA := mustIssue(t, b.kiln(t, append([]string{"party", "add", a.name, "--url", a.url, "--credential", toB}, openPolicy...)...), b.name+"'s party add "+a.name)
			if r := a.kiln(t, "party", "add", b.name, "--credential", toA); r.code != 0 {
				t.Fatalf("%s's party add %s --credential: %s", a.name, b.name, r.stderr)
			}
		}
	}
}

// setPrivateValue sets, at s, the secret the secure sum reads.
func (s *fedServer) setPrivateValue(t *testing.T, value string) {
	t.Helper()
	if r := s.kilnStdin(t, value, "secret", "set", "private-value"); r.code != 0 {
		t.Fatalf("%s: secret set private-value: %s", s.name, r.stderr)
	}
}

// submit submits a workflow to s, detached, and returns its run.
func (s *fedServer) submit(t *testing.T, yaml string, params map[string]string) *apiv1.Run {
	t.Helper()
	run, err := s.api.Submit(t.Context(), apiv1.Submission{Files: []apiv1.SourceFile{{Name: "fed.yaml", Data: []byte(yaml)}}, Params: params})
	if err != nil {
		t.Fatalf("%s: submit: %v", s.name, err)
	}
	return run
}

// run reads run id at s.
func (s *fedServer) run(t *testing.T, id apiv1.RunID) *apiv1.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	r, err := s.api.GetRun(ctx, id)
	if err != nil {
		t.Fatalf("%s: get run %s: %v", s.name, id, err)
	}
	return r
}

// waitDone waits for run id at s to end, and returns it.
func (s *fedServer) waitDone(t *testing.T, id apiv1.RunID, within time.Duration) *apiv1.Run {
	t.Helper()
	var r *apiv1.Run
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		got, err := s.api.GetRun(ctx, id)
		cancel()
		if err == nil {
			r = got
			if r.Status.Phase.Done() {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: run %s did not end within %s: %+v", s.name, id, within, r)
		}
		pause(t, 200*time.Millisecond)
	}
}

// pause waits d, or fails the test if it ends first.
func pause(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-time.After(d):
	case <-t.Context().Done():
		t.Fatal("the test ended while pausing")
	}
}

// logs returns the log of task's attempts in run id at s.
func (s *fedServer) logs(t *testing.T, id apiv1.RunID, task string) string {
	t.Helper()
	var b bytes.Buffer
	if err := s.api.Logs(t.Context(), apiv1.LogQuery{Run: id, Task: task}, &b); err != nil {
		t.Fatalf("%s: logs %s %s: %v", s.name, id, task, err)
	}
	return b.String()
}

// shareLine is a compact view of a node's shares, for messages.
func shareLine(n apiv1.NodeStatus) string {
	var out []string
	for _, p := range n.Parties {
		out = append(out, p.Party+"="+p.State+"("+string(p.Code)+" "+p.Message+")")
	}
	return strings.Join(out, ", ")
}

// nodeOf returns task of run.
func nodeOf(t *testing.T, run *apiv1.Run, task string) apiv1.NodeStatus {
	t.Helper()
	i := slices.IndexFunc(run.Status.Nodes, func(n apiv1.NodeStatus) bool { return n.Name == task })
	if i < 0 {
		t.Fatalf("run %s has no task %s", run.ID, task)
	}
	return run.Status.Nodes[i]
}

// secureSumParams are the secure sum's params: its script, and the kiln
// Python package it imports, for the parties to run.
func secureSumParams(t *testing.T) map[string]string {
	t.Helper()
	return map[string]string{"script": exampleScript(t), "sdk": sdkPath(t)}
}

// sdkPath is where the kiln Python package is, for tasks to import.
func sdkPath(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../sdk/python/src")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// exampleScript is the secure sum's script, for the parties to run.
func exampleScript(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../examples/federated/secure_sum.py")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitMessage waits until part at s logs message name, received.
func waitMessage(t *testing.T, s *fedServer, part apiv1.RunID, name string) {
	t.Helper()
	waitFor(t, s.name+" receiving "+name, func() bool {
		log, _ := s.api.Messages(t.Context(), part)
		return slices.ContainsFunc(log, func(m apiv1.ChannelMessage) bool {
			return m.Name == name && m.Direction == apiv1.ChannelReceived
		})
	})
}

// waitShareState waits until the initiator s shows party's share of the
// federated run in state.
func waitShareState(t *testing.T, s *fedServer, run apiv1.RunID, party string, state string) {
	t.Helper()
	waitFor(t, "party "+party+"'s share "+state, func() bool {
		for _, n := range s.run(t, run).Status.Nodes {
			if slices.ContainsFunc(n.Parties, func(p apiv1.PartyShare) bool { return p.Party == party && p.State == state }) {
				return true
			}
		}
		return false
	})
}
