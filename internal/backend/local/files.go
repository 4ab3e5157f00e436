package local

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// errNotRegular is returned for a name that is a directory, a device, a
// pipe or a socket: a task may plant any of them where a log or an output
// belongs, and none of them is what kiln serves.
var errNotRegular = errors.New("not a regular file")

// openRegular opens name, a path relative to dir, for reading. It never
// resolves a symbolic link to a place outside dir (a task that links its
// stdout to /etc/shadow gets nothing served), never blocks on a pipe a task
// left there, and opens only regular files.
func openRegular(dir, name string) (*os.File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readRegular reads at most limit+1 bytes of name in dir, as openRegular
// opens it, so that a caller can tell a file over its limit.
func readRegular(dir, name string, limit int64) ([]byte, error) {
	f, err := openRegular(dir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// statBeneath reports whether name exists inside dir as a regular file or
// a directory, without resolving a link to a place outside dir.
func statBeneath(dir, name string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	fi, err := root.Stat(name)
	if err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		err = &fs.PathError{Op: "stat", Path: name, Err: errNotRegular}
	}
	return err
}

// escapeMessage words why a file a task wrote cannot be used.
func escapeMessage(what string, err error) string {
	if errors.Is(err, errNotRegular) {
		return fmt.Sprintf("%s is not a regular file", what)
	}
	return fmt.Sprintf("%s cannot be read: %v", what, err)
}
