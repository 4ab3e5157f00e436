package local

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// The engine and the supervisor talk in frames on the supervisor's unix
// socket (docs/design/0001): a 4-byte big-endian length, then a message
// type byte and the message. The engine opens a connection with preamble;
// the supervisor answers with a msgHello frame, or with a msgError frame
// and closes it.

// protoVersion is the version of the framed protocol. A supervisor
// refuses an engine of another version, and the engine one of another.
const protoVersion = 1

// preamble opens every engine's connection: its first byte is one that a
// supervisor of an older kiln (net/rpc and gob) cannot read as a message
// length, so that one closes the connection at once instead of waiting
// for more.
var preamble = [6]byte{0xf0, 'k', 'i', 'l', 'n', protoVersion}

// maxFrame bounds a frame's length: a length beyond it is a torn or
// foreign stream, not a message.
const maxFrame = 64 << 20

// The message types.
const (
	msgHello    byte = 1 // supervisor → engine: protocol version, instance, PID
	msgLaunch   byte = 2 // engine → supervisor: environment strings, then launches
	msgLaunched byte = 3 // supervisor → engine: the answers to launches
	msgCall     byte = 4 // engine → supervisor: one call of a named method
	msgReply    byte = 5 // supervisor → engine: the answer to a call
	msgWatch    byte = 6 // engine → supervisor: push exits from now on
	msgExits    byte = 7 // supervisor → engine: exits and the ledger's standing
	msgError    byte = 8 // either way: what was wrong, before the sender closes
)

// errProtocol is a frame that cannot be read: torn, too long, of an
// unknown type or with a message that does not decode.
var errProtocol = errors.New("malformed frame")

// protocolError is a coded error about the protocol itself.
func protocolError(format string, args ...any) *apiv1.Error {
	return &apiv1.Error{Code: apiv1.CodeSupervisorProtocol, Message: fmt.Sprintf(format, args...)}
}

// appendFrame appends a frame of type typ whose message appendMsg writes.
func appendFrame(buf []byte, typ byte, appendMsg func([]byte) []byte) []byte {
	start := len(buf)
	buf = append(buf, 0, 0, 0, 0, typ)
	if appendMsg != nil {
		buf = appendMsg(buf)
	}
	binary.BigEndian.PutUint32(buf[start:], uint32(len(buf)-start-4)) //nolint:gosec // frames are far below 4 GiB
	return buf
}

// readFrame reads one frame from r, returning its type and message; the
// message is valid until the next call with the same buf.
func readFrame(r *bufio.Reader, buf []byte) (byte, []byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, buf, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || n > maxFrame {
		return 0, buf, fmt.Errorf("%w: length %d", errProtocol, n)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: torn after its length", errProtocol)
		}
		return 0, buf, err
	}
	return buf[0], buf, nil
}

// The encoding of a message's fields: unsigned and signed varints,
// strings and byte strings prefixed by their length, booleans as a byte.

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// decoder reads a message's fields. The first error sticks: later reads
// return zero values, and err says what was wrong.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errProtocol, what)
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad unsigned number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// int reads a non-negative number that fits an int.
func (d *decoder) int() int {
	v := d.varint()
	if v < 0 || v > 1<<31 {
		d.fail("number out of range")
		return 0
	}
	return int(v)
}

// count reads how many items follow, each at least one byte long.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("count beyond the message")
		return 0
	}
	return int(n) //nolint:gosec // bounded by the message's length
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("string beyond the message")
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string { return string(d.bytes()) }

func (d *decoder) strs() []string {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *decoder) bool() bool {
	if len(d.b) == 0 {
		d.fail("message too short")
		return false
	}
	v := d.b[0]
	d.b = d.b[1:]
	if v > 1 {
		d.fail("bad boolean")
	}
	return v == 1
}

// done reports the decoder's error, or one if bytes are left over.
func (d *decoder) done() error {
	if d.err == nil && len(d.b) > 0 {
		d.fail("bytes left after the message")
	}
	return d.err
}
