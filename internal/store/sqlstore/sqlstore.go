// Package sqlstore is the SQL of kiln's stores, shared by SQLite
// (internal/store/sqlite) and PostgreSQL (internal/store/postgres). It is
// written once, with ? placeholders and SQL both databases speak; what
// differs between them is a Dialect, and opening a database and bringing
// its schema up to date stay with each store.
//
// Every check-then-write runs in a write transaction (withTx) in which
// the Dialect makes this writer the only one: SQLite begins it IMMEDIATE,
// holding the file's write lock, and PostgreSQL takes a transaction-scoped
// advisory lock that every kiln writer of that database takes. Rows are
// read and written as one writer at a time sees them, whichever process
// writes. The few writes outside withTx are each one conditional
// statement (ClaimRuns is a compare-and-swap on a run's owner and lease).
package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"kiln.dev/kiln/internal/store"
)

// Dialect is what one database does its own way.
type Dialect interface {
	// BeginWrite runs first in every write transaction: it makes the
	// transaction the only writer until it ends.
	BeginWrite(ctx context.Context, tx *sql.Tx) error
	// Coded turns a driver error about the database itself (unreachable,
	// full, damaged) into a coded error naming it, or returns nil for
	// an error about the query.
	Coded(err error) error
	// IsConflict tells a unique key's violation.
	IsConflict(err error) bool
	// LockRows is what ends a SELECT that must lock the rows it reads
	// until the transaction ends: empty where the writer lock does.
	LockRows() string
}

// Store is a store.Store on a SQL database: db for reads, wdb for writes.
// Either may be the same pool.
type Store struct {
	db      reader  // the read pool, or one snapshot of it (see snapshot)
	pool    *sql.DB // the read pool
	wdb     *sql.DB
	dialect Dialect
	stmts   statements
	rows    rowStmts // multi-row statements, by table and size
	reads   *readStmts
	sealer  *sealer
	group   *grouper // Apply's changes waiting to be committed together
}

// reader is what reads need of a *sql.DB or a *sql.Tx.
type reader interface {
	rowsQuerier
	querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

var _ store.Store = (*Store)(nil)

// New is the store on db (reads) and wdb (writes), whose schema is up to
// date; secret values are sealed with the key at keyFile, made on first
// use. Its errors are the driver's: the caller codes them.
func New(ctx context.Context, db, wdb *sql.DB, d Dialect, keyFile string) (*Store, error) {
	s := &Store{
		db: db, pool: db, wdb: wdb, dialect: d, group: &grouper{}, rows: rowStmts{},
		reads: &readStmts{m: map[string]*sql.Stmt{}},
	}
	if err := errors.Join(s.stmts.prepare(ctx, wdb, d), s.rows.prepare(ctx, wdb)); err != nil {
		return nil, errors.Join(err, s.stmts.close(), s.rows.close())
	}
	s.sealer = loadSealer(ctx, s, keyFile)
	if err := s.sealPlain(ctx); err != nil {
		return nil, errors.Join(err, s.stmts.close())
	}
	return s, nil
}

// Close closes the statements and both pools.
func (s *Store) Close() error {
	errs := []error{s.stmts.close(), s.rows.close(), s.reads.close(), s.pool.Close()}
	if s.wdb != s.pool {
		errs = append(errs, s.wdb.Close())
	}
	return errors.Join(errs...)
}

// withTx runs fn in a write transaction and commits it if fn succeeds.
func (s *Store) withTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := s.dialect.BeginWrite(ctx, tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

// snapshot runs fn on a view of s whose reads all see the database as
// it was at the first of them, whatever commits meanwhile: a read-only
// transaction, deferred in SQLite's WAL and REPEATABLE READ in
// PostgreSQL. A listing whose version and rows must agree reads in one.
func (s *Store) snapshot(ctx context.Context, fn func(view *Store) error) error {
	tx, err := s.pool.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return err
	}
	view := *s
	view.db = tx
	return errors.Join(fn(&view), tx.Rollback())
}

// coded turns a driver error about the database into a coded error, in
// place; errors about the query are left as they are.
func (s *Store) coded(err *error) {
	if *err == nil {
		return
	}
	if c := s.dialect.Coded(*err); c != nil {
		*err = c
	}
}
