package local

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/rpc"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
)

// readOne reads the single frame in b.
func readOne(t *testing.T, b []byte) (byte, []byte) {
	t.Helper()
	typ, msg, err := readFrame(bufio.NewReader(bytes.NewReader(b)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return typ, msg[1:]
}

func sampleLaunch(i int) *StartArgs {
	base := []string{"PATH=/usr/bin:/bin", "HOME=/home/u", "LANG=C.UTF-8"}
	a := &StartArgs{
		ID: fmt.Sprintf("r-%d/task/1", i), WorkingDir: "/w", Leader: "leader", MinHosts: 2, Leave: i%2 == 0, Memory: 1 << 30,
		Release:   []string{"r/old/1"},
		Processes: []ProcessArgs{{Name: "p", Host: 1, Command: []string{"sh", "-c", "echo é"}, Env: append(base, "KILN_TASK="+strconv.Itoa(i))}},
	}
	if i%3 == 0 {
		a.Files = map[string]string{"a": "1", "b": ""}
		a.Room = &resource.Claim{Holder: a.ID, Waiter: "r/task", Request: resource.Request{MilliCPU: 1500, Memory: -1, GPU: 2}, Project: "p", Priority: -7, Step: resource.Request{MilliCPU: 500}, Steps: 1}
		a.Sandbox = &Sandbox{Mode: IsolateUsers, Project: "p", FirstUID: 70000}
	}
	return a
}

func TestAFrameOfManyLaunchesRoundTrips(t *testing.T) {
	var env envTable
	var launches []launchReq
	for i := range 300 {
		launches = append(launches, launchReq{seq: uint64(i + 1), args: sampleLaunch(i)})
	}
	typ, msg := readOne(t, appendLaunches(nil, launches, &env))
	if typ != msgLaunch {
		t.Fatalf("frame type %d, want %d", typ, msgLaunch)
	}
	var table []string
	got, err := decodeLaunches(msg, &table)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(launches) {
		t.Fatalf("%d launches read back, want %d", len(got), len(launches))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], launches[i]) {
			t.Fatalf("launch %d read back as\n%+v\nwant\n%+v", i, *got[i].args, *launches[i].args)
		}
	}
	if len(table) != 3+300 {
		t.Errorf("the table holds %d strings, want the 3 shared once and 300 of the tasks'", len(table))
	}
}

func TestTheEnvironmentIsSentOncePerSession(t *testing.T) {
	var env envTable
	var table []string
	first := appendLaunches(nil, []launchReq{{seq: 1, args: sampleLaunch(1)}}, &env)
	second := appendLaunches(nil, []launchReq{{seq: 2, args: sampleLaunch(1)}}, &env)
	if len(second) >= len(first) {
		t.Errorf("the second frame of the same launch is %d bytes, the first %d: its environment was sent again", len(second), len(first))
	}
	for i, f := range [][]byte{first, second} {
		_, msg := readOne(t, f)
		got, err := decodeLaunches(msg, &table)
		if err != nil {
			t.Fatal(err)
		}
		if want := sampleLaunch(1).Processes[0].Env; !reflect.DeepEqual(got[0].args.Processes[0].Env, want) {
			t.Errorf("frame %d: environment read back as %q, want %q", i, got[0].args.Processes[0].Env, want)
		}
	}
	// A frame naming a string the session never sent is refused.
	_, msg := readOne(t, second)
	if _, err := decodeLaunches(msg, new([]string)); !errors.Is(err, errProtocol) {
		t.Errorf("a launch naming unsent environment strings: %v, want a protocol error", err)
	}
}

func TestAnswersExitsAndCallsRoundTrip(t *testing.T) {
	answers := []answer{{seq: 1}, {seq: 2, err: "no", code: "KLN-6001", contended: true, body: []byte(`{"a":1}`)}}
	_, msg := readOne(t, appendAnswers(nil, msgReply, answers))
	if got, err := decodeAnswers(msg); err != nil || !reflect.DeepEqual(got, []answer{{seq: 1, body: []byte{}}, answers[1]}) {
		t.Errorf("answers read back as %+v (%v)", got, err)
	}
	now := time.Now().UTC().Round(0)
	r := ExitsReply{Instance: "abc", Seq: 9, Contended: true, Granted: 3, Unasked: 1, Exits: []Exit{
		{ID: "r/t/1", Status: statusRecord{ExitCode: 3, Signal: "SIGKILL", Processes: map[string]int{"": 3}, StartedAt: now, FinishedAt: now}},
		{ID: "r/t/2", Status: statusRecord{StartError: "command \"x\" does not exist", NotFound: true, StartedAt: now, FinishedAt: now}},
	}}
	_, msg = readOne(t, appendExits(nil, &r))
	if got, err := decodeExits(msg); err != nil || !reflect.DeepEqual(got, r) {
		t.Errorf("exits read back as %+v (%v), want %+v", got, err, r)
	}
	c := call{seq: 5, method: "Supervisor.State", args: []byte(`{"ID":"r/t/1"}`)}
	_, msg = readOne(t, appendCall(nil, c))
	if got, err := decodeCall(msg); err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("call read back as %+v (%v)", got, err)
	}
	_, msg = readOne(t, appendHello(nil, "inst", 42))
	if v, info, err := decodeHello(msg); err != nil || v != protoVersion || info != (InfoReply{Instance: "inst", PID: 42}) {
		t.Errorf("hello read back as %d %+v (%v)", v, info, err)
	}
}

func TestATornFrameIsAnError(t *testing.T) {
	frame := appendCall(nil, call{seq: 1, method: "Supervisor.Info", args: []byte("{}")})
	for _, cut := range []int{len(frame) - 1, 6} {
		_, _, err := readFrame(bufio.NewReader(bytes.NewReader(frame[:cut])), nil)
		if !errors.Is(err, errProtocol) {
			t.Errorf("a frame cut at %d of %d bytes: %v, want a protocol error", cut, len(frame), err)
		}
	}
	if _, _, err := readFrame(bufio.NewReader(bytes.NewReader(frame[:2])), nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a length cut short: %v, want an unexpected EOF", err)
	}
	for _, hdr := range [][]byte{{0, 0, 0, 0}, {0xff, 0xff, 0xff, 0xff}} {
		if _, _, err := readFrame(bufio.NewReader(bytes.NewReader(hdr)), nil); !errors.Is(err, errProtocol) {
			t.Errorf("length % x: %v, want a protocol error", hdr, err)
		}
	}
	// A message whose fields run past its frame, or stop short of it.
	_, msg := readOne(t, frame)
	if _, err := decodeCall(msg[:len(msg)-1]); !errors.Is(err, errProtocol) {
		t.Errorf("a call cut short: %v, want a protocol error", err)
	}
	if _, err := decodeCall(append(msg, 0)); !errors.Is(err, errProtocol) {
		t.Errorf("a call with a byte left over: %v, want a protocol error", err)
	}
}

// rawConn opens a connection to the supervisor of h's home and reads its
// hello.
func rawConn(t *testing.T, h *harness) (net.Conn, *bufio.Reader) {
	t.Helper()
	if _, err := h.b.Supervisor(t.Context()); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("unix", SocketPath(h.home))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write(preamble[:]); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	if typ, _, err := readFrame(r, nil); err != nil || typ != msgHello {
		t.Fatalf("first frame: type %d (%v), want a hello", typ, err)
	}
	return c, r
}

func TestAnUnknownMessageTypeGetsAClearError(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c, r := rawConn(t, h)
	if _, err := c.Write(appendFrame(nil, 99, func(b []byte) []byte { return append(b, 1, 2, 3) })); err != nil {
		t.Fatal(err)
	}
	typ, msg, err := readFrame(r, nil)
	if err != nil || typ != msgError {
		t.Fatalf("answer: type %d (%v), want an error frame", typ, err)
	}
	var e *apiv1.Error
	if err := decodeError(msg[1:]); !errors.As(err, &e) || e.Code != apiv1.CodeSupervisorProtocol || !strings.Contains(e.Message, "unknown message type 99") {
		t.Errorf("error frame says %v, want %s naming message type 99", err, apiv1.CodeSupervisorProtocol)
	}
	if _, _, err := readFrame(r, nil); !errors.Is(err, io.EOF) {
		t.Errorf("after the error frame: %v, want the connection closed", err)
	}
	// The supervisor serves on: the engine's own connection still works.
	if _, err := h.b.Supervisor(t.Context()); err != nil {
		t.Errorf("the supervisor after a bad frame: %v", err)
	}
	spec := h.launch(t, "r-unknown/t/1", "true")
	if st := h.waitExit(t, spec); st.ExitCode != 0 {
		t.Errorf("a launch after the bad frame ended %+v", st)
	}
}

func TestAnEngineOfAnotherProtocolVersionIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.b.Supervisor(t.Context()); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("unix", SocketPath(h.home))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pre := preamble
	pre[5] = protoVersion + 1
	if _, err := c.Write(pre[:]); err != nil {
		t.Fatal(err)
	}
	typ, msg, err := readFrame(bufio.NewReader(c), nil)
	var e *apiv1.Error
	if err != nil || typ != msgError || !errors.As(decodeError(msg[1:]), &e) || e.Code != apiv1.CodeSupervisorVersion {
		t.Errorf("an engine of protocol %d got frame %d (%v), want a %s error", pre[5], typ, err, apiv1.CodeSupervisorVersion)
	}
}

// serveAsOlderSupervisor serves home as a supervisor of an older kiln
// did, until killed: net/rpc and gob on the socket, the lock held.
func serveAsOlderSupervisor(home string) {
	lock, err := os.OpenFile(filepath.Join(home, "supervisor.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		panic(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		panic(err)
	}
	if err := writePID(lock); err != nil {
		panic(err)
	}
	ln, err := net.Listen("unix", SocketPath(home))
	if err != nil {
		panic(err)
	}
	srv := rpc.NewServer()
	if err := srv.RegisterName("Supervisor", &oldSupervisor{}); err != nil {
		panic(err)
	}
	if os.Getenv("KILN_TEST_OLD_SUPERVISOR_BUSY") != "" {
		// An attempt of its own: a child that runs until it is killed.
		if err := exec.Command("sleep", "3600").Start(); err != nil {
			panic(err)
		}
	}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM)
		<-sig
		os.Remove(SocketPath(home))
		os.Exit(0)
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go srv.ServeConn(c)
	}
}

// startOlderSupervisor starts serveAsOlderSupervisor on home in a process
// of its own, busy or not, and waits until it listens.
func startOlderSupervisor(t *testing.T, home string, busy bool) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "KILN_TEST_OLD_SUPERVISOR_HOME="+home)
	if busy {
		cmd.Env = append(cmd.Env, "KILN_TEST_OLD_SUPERVISOR_BUSY=1")
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	for {
		c, err := net.Dial("unix", SocketPath(home))
		if err == nil {
			c.Close()
			return cmd
		}
		if !alive(cmd.Process.Pid) {
			t.Fatal("the older supervisor did not start")
		}
		runtimeGosched()
	}
}

func TestABusyOlderSupervisorIsRefusedWithACode(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	old := startOlderSupervisor(t, home, true)
	for !hasChildren(old.Process.Pid) {
		runtimeGosched()
	}
	b := New(Config{Home: home, SupervisorCommand: []string{"/usr/bin/env", "KILN_TEST_SUPERVISOR_HOME=" + home, os.Args[0]}})
	defer b.Close()
	_, err := b.Supervisor(t.Context())
	var e *apiv1.Error
	if !errors.As(err, &e) || e.Code != apiv1.CodeSupervisorVersion || !strings.Contains(e.Message, "pid "+strconv.Itoa(old.Process.Pid)) {
		t.Errorf("an engine on a busy older supervisor's home got %v, want %s naming its pid", err, apiv1.CodeSupervisorVersion)
	}
	if !alive(old.Process.Pid) {
		t.Error("the busy older supervisor was stopped")
	}
}

func TestAnIdleOlderSupervisorIsReplaced(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	old := startOlderSupervisor(t, home, false)
	h := newHarnessIn(t, home)
	info, err := h.b.Supervisor(t.Context())
	if err != nil || info.PID == old.Process.Pid {
		t.Fatalf("Supervisor() = %+v, %v; want a supervisor of this build in place of the idle older one (pid %d)", info, err, old.Process.Pid)
	}
	spec := h.launch(t, "r-upgraded/t/1", "true")
	if st := h.waitExit(t, spec); st.ExitCode != 0 {
		t.Errorf("a launch on the new supervisor ended %+v", st)
	}
}

// oldSupervisor has the shape of an older kiln's RPC receiver.
type oldSupervisor struct{}

// Info answers as an older supervisor did.
func (*oldSupervisor) Info(_ Empty, r *InfoReply) error { r.PID = os.Getpid(); return nil }

// FuzzReadFrame feeds the frame reader and every message decoder bytes
// from anywhere: none may panic, and what a decoder accepts must encode
// again to a frame it reads back the same.
func FuzzReadFrame(f *testing.F) {
	var env envTable
	f.Add(appendLaunches(nil, []launchReq{{seq: 1, args: sampleLaunch(0)}, {seq: 2, args: sampleLaunch(1)}}, &env))
	f.Add(appendAnswers(nil, msgLaunched, []answer{{seq: 1, err: "x", code: "KLN-6001"}}))
	f.Add(appendExits(nil, &ExitsReply{Instance: "i", Seq: 1, Exits: []Exit{{ID: "r/t/1"}}}))
	f.Add(appendCall(nil, call{seq: 1, method: "Supervisor.Info", args: []byte("{}")}))
	f.Add(appendHello(nil, "i", 1))
	f.Add(appendError(nil, &apiv1.Error{Code: apiv1.CodeSupervisorProtocol, Message: "m"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		for {
			typ, msg, err := readFrame(r, nil)
			if err != nil {
				return
			}
			decodeAny(t, typ, msg[1:])
		}
	})
}

func decodeAny(t *testing.T, typ byte, msg []byte) {
	switch typ {
	case msgLaunch:
		var table []string
		if ls, err := decodeLaunches(msg, &table); err == nil && len(ls) > maxLaunchesPerFrame*64 {
			t.Fatalf("%d launches from %d bytes", len(ls), len(msg))
		}
	case msgLaunched, msgReply:
		if as, err := decodeAnswers(msg); err == nil {
			_, again := readOne(t, appendAnswers(nil, typ, as))
			if bs, err := decodeAnswers(again); err != nil || len(bs) != len(as) {
				t.Fatalf("answers %+v did not read back: %+v, %v", as, bs, err)
			}
		}
	case msgExits:
		_, _ = decodeExits(msg)
	case msgCall:
		if c, err := decodeCall(msg); err == nil {
			_, again := readOne(t, appendCall(nil, c))
			if d, err := decodeCall(again); err != nil || d.seq != c.seq || d.method != c.method || !bytes.Equal(d.args, c.args) {
				t.Fatalf("call %+v read back as %+v, %v", c, d, err)
			}
		}
	case msgHello:
		_, _, _ = decodeHello(msg)
	case msgError:
		_ = decodeError(msg)
	}
}
