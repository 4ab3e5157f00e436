package local

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// errConnLost is a call cut short because the connection to the
// supervisor closed; the call may be made again on a new one.
var errConnLost = errors.New("the connection to the supervisor closed")

// maxLaunchesPerFrame bounds a frame's launches, so that one frame's new
// environment strings stay within what the supervisor takes.
const maxLaunchesPerFrame = 1024

// supConn is an engine's connection to the supervisor: callers queue
// launches and calls, a writer sends all that is queued in one frame
// each time it runs, and a reader hands each answer to its caller and
// each push of exits to the watcher.
type supConn struct {
	conn net.Conn
	info InfoReply

	mu       sync.Mutex
	seq      uint64
	pending  map[uint64]chan answer
	launches []launchReq
	calls    []call
	watch    bool // a msgWatch is to be sent
	env      envTable
	err      error // why the connection ended
	watcher  *watcher
	kick     chan struct{}
	dead     chan struct{}
}

// handshake opens the framed protocol on conn and reads the supervisor's
// hello. A supervisor of an older kiln (net/rpc) closes the connection on
// the preamble: it is told apart by that, and refused with a coded error.
func handshake(ctx context.Context, conn net.Conn, home string) (*supConn, error) {
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	r := bufio.NewReaderSize(conn, 64<<10)
	if _, err := conn.Write(preamble[:]); err != nil {
		return nil, err
	}
	typ, msg, err := readFrame(r, nil)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil && SupervisorPID(home) > 0 && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, errProtocol) || errors.Is(err, syscall.ECONNRESET)):
		return nil, older(home) // it heard the preamble, and hung up
	case err != nil:
		return nil, fmt.Errorf("%w: %w", errConnLost, err)
	case typ == msgError:
		return nil, decodeError(msg[1:])
	case typ != msgHello:
		return nil, older(home)
	}
	version, info, err := decodeHello(msg[1:])
	if err != nil || version != protoVersion {
		return nil, older(home)
	}
	c := &supConn{conn: conn, info: info, pending: map[uint64]chan answer{}, kick: make(chan struct{}, 1), dead: make(chan struct{})}
	go c.readLoop(r)
	go c.writeLoop()
	return c, nil
}

// older handles a supervisor of another build: one that runs nothing is
// stopped, and the connection is to be made again (a supervisor of this
// build then starts); one that runs attempts is refused.
func older(home string) error {
	if replaceIdle(home, SupervisorPID(home)) {
		return fmt.Errorf("%w: an idle supervisor of another kiln build was stopped", errConnLost)
	}
	return olderSupervisor(home)
}

// olderSupervisor is the error for a supervisor that does not speak this
// build's protocol.
func olderSupervisor(home string) error {
	return &apiv1.Error{Code: apiv1.CodeSupervisorVersion, Message: fmt.Sprintf(
		"the supervisor serving %s (pid %d) is from another kiln build and does not speak this one's protocol (version %d); the attempts it runs go on under it",
		home, SupervisorPID(home), protoVersion)}
}

// launch starts an attempt and reports whether another engine waits.
func (c *supConn) launch(ctx context.Context, a *StartArgs) (bool, error) {
	ans, err := c.do(ctx, func(seq uint64) { c.launches = append(c.launches, launchReq{seq: seq, args: a}) })
	return ans.contended, err
}

// call makes one call of a named method.
func (c *supConn) call(ctx context.Context, method string, args, reply any) error {
	body, err := json.Marshal(args)
	if err != nil {
		return err
	}
	ans, err := c.do(ctx, func(seq uint64) { c.calls = append(c.calls, call{seq: seq, method: method, args: body}) })
	if err != nil {
		return err
	}
	return json.Unmarshal(ans.body, reply)
}

// do queues a request and waits for its answer.
func (c *supConn) do(ctx context.Context, queue func(seq uint64)) (answer, error) {
	ch := make(chan answer, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return answer{}, c.err
	}
	c.seq++
	seq := c.seq
	c.pending[seq] = ch
	queue(seq)
	c.mu.Unlock()
	c.wake()
	select {
	case a := <-ch:
		return a, a.error()
	case <-c.dead:
		return answer{}, c.err
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, seq)
		c.mu.Unlock()
		return answer{}, ctx.Err()
	}
}

// error is the answer's error, with its code if it had one.
func (a answer) error() error {
	switch {
	case a.err == "":
		return nil
	case a.code != "":
		return &apiv1.Error{Code: apiv1.Code(a.code), Message: a.err}
	}
	return remoteError(a.err)
}

// remoteError is an error the supervisor answered with.
type remoteError string

func (e remoteError) Error() string { return string(e) }

// subscribe asks for exits to be pushed to the returned channel until
// unsubscribe is called or the connection ends: then dead closes.
func (c *supConn) subscribe() (exits <-chan ExitsReply, dead <-chan struct{}) {
	w := &watcher{ch: make(chan ExitsReply, 16), gone: make(chan struct{})}
	c.mu.Lock()
	c.watcher, c.watch = w, true
	c.mu.Unlock()
	c.wake()
	return w.ch, c.dead
}

// unsubscribe stops handing pushes to the watcher: the reader drops them.
func (c *supConn) unsubscribe() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watcher != nil {
		close(c.watcher.gone)
		c.watcher = nil
	}
}

// watcher is where pushed exits go.
type watcher struct {
	ch   chan ExitsReply
	gone chan struct{} // closed when the watcher no longer reads
}

func (c *supConn) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// writeLoop sends what is queued whenever woken, in one write.
func (c *supConn) writeLoop() {
	var buf []byte
	for {
		select {
		case <-c.kick:
		case <-c.dead:
			return
		}
		c.mu.Lock()
		buf = buf[:0]
		if c.watch {
			buf, c.watch = appendFrame(buf, msgWatch, nil), false
		}
		for _, k := range c.calls {
			buf = appendCall(buf, k)
		}
		c.calls = c.calls[:0]
		for len(c.launches) > 0 {
			n := min(len(c.launches), maxLaunchesPerFrame)
			buf = appendLaunches(buf, c.launches[:n], &c.env)
			c.launches = c.launches[n:]
		}
		c.launches = nil
		c.mu.Unlock()
		if _, err := c.conn.Write(buf); err != nil {
			c.fail(fmt.Errorf("%w: %w", errConnLost, err))
			return
		}
	}
}

// readLoop hands out what the supervisor sends until the connection ends.
func (c *supConn) readLoop(r *bufio.Reader) {
	var buf []byte
	for {
		typ, msg, err := readFrame(r, buf)
		buf = msg
		if err == nil {
			err = c.handle(typ, msg[1:])
		}
		if errors.Is(err, errProtocol) {
			err = protocolError("the engine cannot read the supervisor's frame: %v", err)
		}
		if err != nil {
			var coded *apiv1.Error
			if !errors.As(err, &coded) {
				err = fmt.Errorf("%w: %w", errConnLost, err)
			}
			c.fail(err)
			return
		}
	}
}

func (c *supConn) handle(typ byte, msg []byte) error {
	switch typ {
	case msgLaunched, msgReply:
		answers, err := decodeAnswers(msg)
		if err != nil {
			return err
		}
		for _, a := range answers {
			a.body = append([]byte(nil), a.body...) // msg is the reader's buffer
			c.answer(a)
		}
	case msgExits:
		r, err := decodeExits(msg)
		if err != nil {
			return err
		}
		c.mu.Lock()
		w := c.watcher
		c.mu.Unlock()
		if w != nil {
			select {
			case w.ch <- r:
			case <-w.gone:
			case <-c.dead:
			}
		}
	case msgError:
		return decodeError(msg)
	default:
		return protocolError("the engine got a frame of unknown message type %d (protocol version %d)", typ, protoVersion)
	}
	return nil
}

func (c *supConn) answer(a answer) {
	c.mu.Lock()
	ch := c.pending[a.seq]
	delete(c.pending, a.seq)
	c.mu.Unlock()
	if ch != nil {
		ch <- a
	}
}

// fail ends the connection for err: waiting callers get err, and the
// watcher learns it from dead.
func (c *supConn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	c.conn.Close()
	close(c.dead)
}

// Close closes the connection.
func (c *supConn) Close() error {
	c.fail(fmt.Errorf("%w: closed by the engine", errConnLost))
	return nil
}
