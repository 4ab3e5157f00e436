package local

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"sync"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// served is one engine's connection, as the supervisor serves it: a reader
// that starts what each frame asks for, and a writer that sends, in one
// write, every answer ready and every exit since its last, when there are
// any (exits are pushed, never polled for).
type served struct {
	sess *session
	conn net.Conn
	env  []string // the session's environment strings, by index

	mu       sync.Mutex
	launched []answer
	replies  []answer
	watching bool
	fatal    *apiv1.Error // sent last, then the connection closes
	kick     chan struct{}
	done     chan struct{}
}

// serveConn serves an engine's connection until it closes.
func serveConn(c net.Conn, sess *session) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	var pre [len(preamble)]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil || [5]byte(pre[:5]) != [5]byte(preamble[:5]) {
		return // not a kiln engine of the framed protocol
	}
	sv := &served{sess: sess, conn: c, kick: make(chan struct{}, 1), done: make(chan struct{})}
	if pre[5] != protoVersion {
		_, _ = c.Write(appendError(nil, &apiv1.Error{Code: apiv1.CodeSupervisorVersion, Message: fmt.Sprintf(
			"the supervisor (pid %d) speaks protocol version %d, the engine %d: they are different kiln builds", os.Getpid(), protoVersion, pre[5])}))
		return
	}
	if _, err := c.Write(appendHello(nil, sess.instance, os.Getpid())); err != nil {
		return
	}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		sv.writeLoop()
	}()
	sv.readLoop(r)
	close(sv.done)
	<-wrote
}

// readLoop reads frames until the connection closes or one cannot be
// read; that one is answered with a msgError.
func (sv *served) readLoop(r *bufio.Reader) {
	var buf []byte
	for {
		typ, msg, err := readFrame(r, buf)
		buf = msg
		if err == nil {
			err = sv.handle(typ, msg[1:])
		}
		var pe *apiv1.Error
		switch {
		case errors.As(err, &pe):
			sv.stop(pe)
			return
		case errors.Is(err, errProtocol):
			sv.stop(protocolError("the supervisor cannot read the engine's frame: %v", err))
			return
		case err != nil:
			return
		}
	}
}

// stop sends e and ends the connection once the writer has sent it.
func (sv *served) stop(e *apiv1.Error) {
	sv.mu.Lock()
	sv.fatal = e
	sv.mu.Unlock()
	sv.wake()
}

// handle starts what one frame asks for: launches and calls run in their
// own goroutines, so that forks and file work go on in parallel.
func (sv *served) handle(typ byte, msg []byte) error {
	switch typ {
	case msgLaunch:
		launches, err := decodeLaunches(msg, &sv.env)
		if err != nil {
			return err
		}
		for _, l := range launches {
			go sv.launch(l)
		}
	case msgCall:
		c, err := decodeCall(msg)
		if err != nil {
			return err
		}
		c.args = append([]byte(nil), c.args...) // msg is the reader's buffer
		go sv.call(c)
	case msgWatch:
		sv.mu.Lock()
		sv.watching = true
		sv.mu.Unlock()
		sv.wake()
	default:
		return protocolError("the supervisor got a frame of unknown message type %d (protocol version %d)", typ, protoVersion)
	}
	return nil
}

func (sv *served) launch(l launchReq) {
	a := answer{seq: l.seq}
	if err := sv.sess.start(sv.sess.id, *l.args); err != nil {
		a.err, a.code = errorText(err)
	}
	sv.mu.Lock()
	sv.launched = append(sv.launched, a)
	sv.mu.Unlock()
	sv.wake()
}

func (sv *served) call(c call) {
	a := answer{seq: c.seq}
	body, err := dispatch(sv.sess, c.method, c.args)
	if err != nil {
		a.err, a.code = errorText(err)
	}
	a.body = body
	sv.mu.Lock()
	sv.replies = append(sv.replies, a)
	sv.mu.Unlock()
	sv.wake()
}

// errorText is err's text and, for a coded error, its code.
func errorText(err error) (string, string) {
	var e *apiv1.Error
	if errors.As(err, &e) {
		return e.Message, string(e.Code)
	}
	return err.Error(), ""
}

func (sv *served) wake() {
	select {
	case sv.kick <- struct{}{}:
	default:
	}
}

// writeLoop sends what is ready whenever it is woken: by an answer, by an
// exit or a change in the engine's standing in the ledger (once the
// engine watches), or by the reader's end.
func (sv *served) writeLoop() {
	var (
		buf     []byte
		after   uint64 = math.MaxUint64 // the first push tells the engine where exits stand
		granted uint64
		told    bool // the engine was told once
		contend bool // what the engine was told last of other engines waiting
		closing bool // the reader has ended
	)
	for {
		sv.mu.Lock()
		launched, replies, watching, fatal := sv.launched, sv.replies, sv.watching, sv.fatal
		sv.launched, sv.replies = nil, nil
		sv.mu.Unlock()
		buf = buf[:0]
		var changed, grant <-chan struct{}
		var r ExitsReply
		if watching {
			changed, grant = sv.sess.exitsAfter(sv.sess.id, after, &r)
		} else {
			r.Contended = sv.sess.ledger.Contended(sv.sess.id)
		}
		if len(launched) > 0 {
			for i := range launched {
				launched[i].contended = r.Contended
			}
			buf = appendAnswers(buf, msgLaunched, launched)
			contend = r.Contended
		}
		if len(replies) > 0 {
			buf = appendAnswers(buf, msgReply, replies)
		}
		if watching && (!told || r.Reset || r.Seq != after || r.Contended != contend || r.Granted != granted) {
			buf = appendExits(buf, &r)
			told, after, granted, contend = true, r.Seq, r.Granted, r.Contended
		}
		if fatal != nil {
			buf = appendError(buf, fatal)
		}
		if len(buf) > 0 {
			if _, err := sv.conn.Write(buf); err != nil {
				sv.conn.Close() // the reader ends too
				return
			}
		}
		if fatal != nil || closing {
			sv.conn.Close()
			return
		}
		select {
		case <-sv.kick:
		case <-changed:
		case <-grant:
		case <-sv.done:
			closing = true // once more: the reader may have left an error frame to send
		}
	}
}

// methods are the calls an engine can make by name, other than launches
// and exits, which have messages of their own.
var methods = map[string]func(*session, []byte) ([]byte, error){
	"Supervisor.State":     handler((*session).State),
	"Supervisor.Signal":    handler((*session).Signal),
	"Supervisor.Info":      handler((*session).Info),
	"Supervisor.Admit":     handler((*session).Admit),
	"Supervisor.Hold":      handler((*session).Hold),
	"Supervisor.Release":   handler((*session).Release),
	"Supervisor.Withdraw":  handler((*session).Withdraw),
	"Supervisor.SetQuotas": handler((*session).SetQuotas),
	"Supervisor.Join":      handler((*session).Join),
	"Supervisor.Resize":    handler((*session).Resize),
	"Supervisor.RemoveRun": handler((*session).RemoveRun),
	"Supervisor.Unwritten": handler((*session).Unwritten),
}

// errNoMethod is the text of the answer to a call of no known method.
const errNoMethod = "no such method"

func dispatch(s *session, method string, args []byte) ([]byte, error) {
	m, ok := methods[method]
	if !ok {
		return nil, fmt.Errorf("%s: %s", errNoMethod, method)
	}
	return m(s, args)
}

// handler adapts a method of the RPC shape (arguments, reply) to JSON.
func handler[A, R any](f func(*session, A, *R) error) func(*session, []byte) ([]byte, error) {
	return func(s *session, args []byte) ([]byte, error) {
		var a A
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, fmt.Errorf("%w: arguments: %w", errProtocol, err)
		}
		var r R
		if err := f(s, a, &r); err != nil {
			return nil, err
		}
		return json.Marshal(&r)
	}
}
