package local

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A process's stdout and stderr reach their log files through the
// supervisor: it reads each stream from a pipe, notes in the log's time
// index when each chunk arrived, then appends the chunk to the log. The
// log stays the bytes the process wrote, as before; the index, beside it
// as "<log>.times", holds one record per chunk: the log's offset where
// the chunk begins and the time it was read, both little-endian int64s
// (Unix nanoseconds). A record is written before its chunk, so every
// byte a reader finds in a log has its time. Attempts started before the
// index existed have none, and their lines no time. A log is created with
// its stream's first chunk, its index just after it: a stream that stays
// silent costs no file (creating one cost a task 50 to 200 µs of kernel
// time on ext4), and readers take a missing log for an empty one. Neither
// is opened through a link or onto a pipe a task made; a task isolated by
// users or sandboxed cannot write in its attempt's directory, and one that
// is not runs as the supervisor's user, so what it could put there first
// gains it nothing it did not have.
//
// A disk that refuses a chunk (full, say) never stops the process: the
// supervisor reads on, counting the bytes it could not write. Once a
// write succeeds again it first writes the marker "[kiln: N bytes lost:
// disk full]" on a line of its own, where the loss happened; at the end
// it tries once more. What no marker in the log accounts for goes with
// the attempt's end (logLoss), and the log is served with its marker
// after it (logs.go).

// timesSuffix names a log's time index.
const timesSuffix = ".times"

// timeRecordSize is the size of one record of a time index.
const timeRecordSize = 16

// captureBuffer is how much of a stream one read takes.
const captureBuffer = 4 << 10

// captureDrain is how long a process's streams may stay open after it
// has ended (held by something it started outside its process group),
// before the supervisor stops reading them.
const captureDrain = time.Second

// capture copies one stream of a process into its log file.
type capture struct {
	r       *os.File
	log     *logFile // nil until the first chunk
	path    string   // the log's, for its index
	index   *logFile
	indexed int64 // the index's size
	off     int64
	done    chan struct{}
	loss    logLoss // what the log lost, and what of it no marker in it says
	midLine bool    // the last byte written did not end a line
}

// logLoss is what one log could not hold: Bytes of its stream were not
// written, Unmarked of them have no marker in the log itself, for Cause
// ("disk full").
type logLoss struct {
	Bytes    int64  `json:"bytes"`
	Unmarked int64  `json:"unmarked,omitempty"`
	Cause    string `json:"cause"`
}

// openCapture makes a pipe to log file name in dir, which is created
// with the first chunk: the process writes to w; start copies what it
// writes.
func openCapture(dir, name string) (c *capture, w *os.File, err error) {
	return createCapture(dir, name, false)
}

// createCapture is openCapture in a directory that, if made says so, was
// made for this start: no log or index of an earlier start can be in it,
// so none is removed (calls that would fail).
func createCapture(dir, name string, made bool) (c *capture, w *os.File, err error) {
	path := filepath.Join(dir, name)
	if !made { // a log and index left by a start that failed
		if err := syscall.Unlink(path); err != nil && !errors.Is(err, syscall.ENOENT) {
			return nil, nil, &os.PathError{Op: "remove", Path: path, Err: err}
		}
		_ = syscall.Unlink(path + timesSuffix)
	}
	r, w, err := capturePipe()
	if err != nil {
		return nil, nil, err
	}
	return &capture{r: r, path: path, done: make(chan struct{})}, w, nil
}

// logFlags open a log or its index for writing, never through a link
// and never blocking on a pipe a task may have put in its place.
const logFlags = os.O_CREATE | os.O_WRONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// capturePipe makes a pipe whose read end the runtime's poller waits on
// and whose write end stays blocking, for the process: the few calls
// os.Pipe and os/exec would spend making both ends non-blocking, then the
// write end blocking again, are not made.
func capturePipe() (r, w *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	if _, err := unix.FcntlInt(uintptr(fds[0]), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}

// start copies the stream until every writer has closed it.
func (c *capture) start() { go c.copy() }

func (c *capture) copy() {
	defer close(c.done)
	defer c.closeFiles()
	defer c.r.Close()
	buf := make([]byte, captureBuffer)
	for {
		n, err := c.r.Read(buf)
		if n > 0 {
			c.take(buf[:n], time.Now())
		}
		if err != nil {
			break
		}
	}
	c.finish(time.Now())
}

// finish tries once more to mark a loss not marked yet: what stays
// unmarked goes with the attempt's end.
func (c *capture) finish(at time.Time) {
	if c.loss.Unmarked > 0 {
		_ = c.mark(at)
	}
}

// take appends chunk b to the log, after the marker of a loss not marked
// yet; what the disk refuses is counted, never waited on.
func (c *capture) take(b []byte, at time.Time) {
	if c.loss.Unmarked > 0 {
		if err := c.mark(at); err != nil {
			c.lose(int64(len(b)), err)
			return
		}
	}
	n, err := c.write(b, at)
	if err != nil {
		c.lose(int64(len(b)-n), err)
	}
}

// lose counts n bytes of the stream that were not written, for err.
func (c *capture) lose(n int64, err error) {
	c.loss.Bytes += n
	c.loss.Unmarked += n
	c.loss.Cause = lossCause(err)
}

// mark writes the marker of the bytes lost since the last one, whole or
// not at all: a marker cut short is cut from the log.
func (c *capture) mark(at time.Time) error {
	line := marker(c.loss.Unmarked, c.loss.Cause)
	if c.midLine {
		line = "\n" + line
	}
	off, midLine := c.off, c.midLine
	if _, err := c.write([]byte(line), at); err != nil {
		c.off, c.midLine = off, midLine
		if c.log != nil && c.log.Truncate(off) == nil {
			_, _ = c.log.Seek(off, io.SeekStart)
		}
		return err
	}
	c.loss.Unmarked = 0
	return nil
}

// marker is the line that says n bytes of a log were lost, for cause.
func marker(n int64, cause string) string {
	return fmt.Sprintf("[kiln: %d bytes lost: %s]\n", n, cause)
}

// lossCause says in a few words why a log write failed: "disk full" for
// a full device or quota, else the system's own words.
func lossCause(err error) string {
	var errno syscall.Errno
	switch {
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		return "disk full"
	case errors.As(err, &errno):
		return errno.Error()
	}
	return err.Error()
}

// write records when chunk b arrived, then appends it to the log, and
// returns how much of b the log took. The log is created first: an index
// record is never written for a log that could not be.
func (c *capture) write(b []byte, at time.Time) (int, error) {
	if c.log == nil {
		f, err := openLog(c.path, logFlags|os.O_TRUNC)
		if err != nil {
			return 0, err
		}
		c.log = f
	}
	if c.index == nil {
		f, err := openLog(c.path+timesSuffix, logFlags|os.O_APPEND)
		if err != nil {
			return 0, err
		}
		c.index = f
	}
	var rec [timeRecordSize]byte
	binary.LittleEndian.PutUint64(rec[:8], uint64(c.off))
	binary.LittleEndian.PutUint64(rec[8:], uint64(at.UnixNano()))
	if n, err := c.index.Write(rec[:]); err != nil {
		if n > 0 { // a record cut short would shift every later one
			_ = c.index.Truncate(c.indexed)
		}
		return 0, err
	}
	c.indexed += timeRecordSize
	n, err := c.log.Write(b)
	c.off += int64(n)
	if n > 0 {
		c.midLine = b[n-1] != '\n'
	}
	return n, err
}

// wait waits until the stream is copied, or, once d has passed, stops
// reading it: what is still writing it outlived its process.
func (c *capture) wait(d time.Duration) {
	select {
	case <-c.done:
	case <-time.After(d):
		_ = c.r.SetReadDeadline(time.Now())
		<-c.done
	}
}

func (c *capture) closeFiles() {
	if c.index != nil {
		_ = c.index.Close()
	}
	if c.log != nil {
		_ = c.log.Close()
	}
}

// abandon closes a capture whose process never started.
func (c *capture) abandon() { c.r.Close() }

// logFile is a log or its index, written through its descriptor: an
// *os.File would offer each to the runtime's poller, which refuses a
// regular file, a failing call per file.
type logFile struct{ fd int }

// openLog opens the file at path with flags, made 0600 if it is created.
func openLog(path string, flags int) (*logFile, error) {
	fd, err := syscall.Open(path, flags|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &logFile{fd: fd}, nil
}

// Write writes b whole, or as much as the file took before an error.
func (f *logFile) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := syscall.Write(f.fd, b[n:])
		if m > 0 {
			n += m
		}
		switch {
		case errors.Is(err, syscall.EINTR):
		case err != nil:
			return n, err
		case m <= 0:
			return n, io.ErrShortWrite
		}
	}
	return n, nil
}

// Truncate cuts the file to size bytes.
func (f *logFile) Truncate(size int64) error { return syscall.Ftruncate(f.fd, size) }

// Seek sets where the next write goes.
func (f *logFile) Seek(off int64, whence int) (int64, error) { return syscall.Seek(f.fd, off, whence) }

// Close closes the file.
func (f *logFile) Close() error { return syscall.Close(f.fd) }
