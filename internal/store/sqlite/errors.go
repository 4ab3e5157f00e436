package sqlite

import (
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Primary result codes of SQLite that say something about the file rather
// than the query (https://sqlite.org/rescode.html).
const (
	sqliteError   = 1
	sqliteIOErr   = 10
	sqliteCorrupt = 11
	sqliteFull    = 13
	sqliteNotADB  = 26
)

// lowSpace is the free space under which an I/O error is taken for a full
// disk: SQLite reports a write that hit ENOSPC as SQLITE_FULL, or, in the
// write-ahead log, as a plain I/O error.
const lowSpace = 1 << 20

// fileError is the coded error for SQLite result code rc, with message
// msg, on the store at path, or nil if rc is not about the file.
func fileError(path string, rc int, msg string) *apiv1.Error {
	free, known := freeBytes(path)
	switch rc & 0xff {
	case sqliteError:
		if lostSchema(msg) {
			return &apiv1.Error{Code: apiv1.CodeStoreCorrupt, File: path, Message: "the store has lost part of kiln's tables: they were dropped or changed by hand"}
		}
	case sqliteFull:
		return fullError(path, free, known)
	case sqliteIOErr:
		if known && free < lowSpace {
			return fullError(path, free, known)
		}
		return &apiv1.Error{Code: apiv1.CodeStoreOpen, File: path, Message: "the store cannot be read or written"}
	case sqliteCorrupt, sqliteNotADB:
		return &apiv1.Error{Code: apiv1.CodeStoreCorrupt, File: path, Message: "the store file is damaged"}
	}
	return nil
}

func fullError(path string, free uint64, known bool) *apiv1.Error {
	where := "the disk holding the store is full"
	if known {
		where = fmt.Sprintf("the disk holding the store is full (%d bytes free)", free)
	}
	return &apiv1.Error{Code: apiv1.CodeStoreFull, File: path, Message: where}
}

// freeBytes is the space an unprivileged writer has left on the file
// system holding path.
func freeBytes(path string) (uint64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(path), &st); err != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true //nolint:gosec // block size is positive
}

// lostSchema reports whether SQLite's message msg says a table or
// column of kiln's is missing ("no such table: runs"); the message, which
// follows the coded error's, names it.
func lostSchema(msg string) bool {
	return strings.Contains(msg, "no such table: ") || strings.Contains(msg, "no such column: ")
}
