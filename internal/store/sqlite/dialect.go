package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"modernc.org/sqlite"
)

// dialect is SQLite's sqlstore.Dialect for the store at path.
type dialect struct{ path string }

// BeginWrite does nothing: the driver begins every transaction IMMEDIATE
// (_txlock=immediate), holding the file's write lock from its start.
func (dialect) BeginWrite(context.Context, *sql.Tx) error { return nil }

// Coded implements sqlstore.Dialect: errors about the file (its disk is
// full, its pages are damaged) name it.
func (d dialect) Coded(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return nil
	}
	if c := fileError(d.path, se.Code(), err.Error()); c != nil {
		c.Message += ": " + err.Error()
		return c
	}
	return nil
}

// IsConflict implements sqlstore.Dialect.
func (dialect) IsConflict(err error) bool { return strings.Contains(err.Error(), "UNIQUE") }

// LockRows implements sqlstore.Dialect: the write lock is held already.
func (dialect) LockRows() string { return "" }
