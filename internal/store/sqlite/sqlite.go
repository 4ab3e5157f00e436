// Package sqlite is the default, embedded store: one SQLite file in WAL
// mode, opened with a pure-Go driver, so kiln needs no database server and
// no cgo. Several kiln processes may share one file. The SQL is
// internal/store/sqlstore's, shared with the PostgreSQL store; this
// package opens and migrates the file and is sqlstore's SQLite dialect.
//
// A new file is made from schema.sql in one transaction; an older one
// takes the migrations it lacks in turn. A new migration goes in
// migrations/, numbered after the last, and `go generate
// ./internal/store/...` then rewrites schema.sql (TestSchemaFile fails
// until it does).
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a store.Store on one SQLite file. Writes go through one
// connection, so this process's writers queue in Go instead of sleeping
// in SQLite's busy handler (which backs off in steps of up to 100 ms);
// reads use a pool of their own, which WAL lets run beside the writer.
// The SQL is sqlstore's, spoken in this package's dialect.
type Store struct {
	*sqlstore.Store
	path    string
	db      *sql.DB // reads
	wdb     *sql.DB // writes: one connection
	exiting bool    // Options.Exiting
}

var _ store.Store = (*Store)(nil)

// Options tune durability. The zero value is the default.
type Options struct {
	// FullSync makes every commit survive power loss (synchronous=FULL),
	// at several times the cost. By default commits survive a killed
	// process but not a power cut (synchronous=NORMAL).
	FullSync bool
	// SecretKeyFile is where the key that seals secret values is kept;
	// default secret.key beside the database. It is made on first use.
	SecretKeyFile string
	// Exiting says that the process ends right after Close, as a kiln
	// command does. Close then leaves the file to the process's exit to
	// close, as a killed process would: the WAL stays for the next opener
	// to read, instead of being copied into the database file and
	// deleted, which costs two fsyncs at Close and two more (the new
	// WAL's header and its directory) at the next process's first write.
	// Every commit is as safe either way: in the WAL, and read back from
	// it by the next opener (see FullSync for power loss).
	Exiting bool
}

// Open opens or creates the store at path and brings its schema up to date.
// Its errors are *apiv1.Error with a KLN-5xxx code.
func Open(ctx context.Context, path string, opt Options) (*Store, error) {
	if err := prepareFile(ctx, path, opt); err != nil {
		return nil, err
	}
	return open(ctx, path, opt)
}

// open opens the store at path, creating it if SQLite finds no file there.
func open(ctx context.Context, path string, opt Options) (*Store, error) {
	s, dsn, err := openWriter(ctx, path, opt)
	if err != nil {
		return nil, err
	}
	wdb := s.wdb
	if s.db, err = sql.Open("sqlite", dsn); err != nil {
		wdb.Close()
		return nil, openError(path, err)
	}
	s.db.SetMaxOpenConns(8)
	if opt.SecretKeyFile == "" {
		opt.SecretKeyFile = filepath.Join(filepath.Dir(path), "secret.key")
	}
	if s.Store, err = sqlstore.New(ctx, s.db, wdb, dialect{path: path}, opt.SecretKeyFile); err != nil {
		s.db.Close()
		wdb.Close()
		return nil, openError(path, err)
	}
	return s, nil
}

// openWriter opens the store's writer connection, creating the file if
// SQLite finds none there, and brings its schema up to date. It returns
// the store, with neither readers nor statements yet, and the address
// readers open.
func openWriter(ctx context.Context, path string, opt Options) (*Store, string, error) {
	sync := "NORMAL"
	if opt.FullSync {
		sync = "FULL"
	}
	dsn := "file:" + path + "?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(" + sync + ")&_pragma=foreign_keys(1)"
	wdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, "", openError(path, err)
	}
	wdb.SetMaxOpenConns(1)
	s := &Store{path: path, wdb: wdb, exiting: opt.Exiting}
	if err := s.migrateWhenFree(ctx, path); err != nil {
		wdb.Close()
		return nil, "", err
	}
	return s, dsn, nil
}

// Close closes the store; with Options.Exiting it leaves the
// connections open for the process's exit to close, and the WAL with them.
func (s *Store) Close() error {
	if s.exiting {
		return nil
	}
	return s.Store.Close()
}

// migrateWhenFree migrates, waiting out another process that holds the
// file while it creates or migrates it: SQLite answers such an opener
// "database is locked" at once, without waiting in its busy handler.
func (s *Store) migrateWhenFree(ctx context.Context, path string) error {
	deadline := time.Now().Add(10 * time.Second)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err := s.migrate(ctx, path, schemaFile)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

func isBusy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}

// migrate brings the store's schema up to date: a new store is made from
// schema (see schemaFile), and then takes in turn the migrations schema
// lacks.
func (s *Store) migrate(ctx context.Context, path, schema string) error {
	var version int
	if err := s.wdb.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return openError(path, err)
	}
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	slices.Sort(files)
	if version > len(files) {
		return &apiv1.Error{
			Code: apiv1.CodeStoreVersion, File: path,
			Message: fmt.Sprintf("store schema version %d is newer than this kiln knows (%d)", version, len(files)),
		}
	}
	if version == 0 {
		if version, err = s.createSchema(ctx, schema); err != nil {
			return openError(path, err)
		}
	}
	for i := version; i < len(files); i++ {
		if err := s.apply(ctx, files[i], i+1); err != nil {
			return openError(path, err)
		}
	}
	return nil
}

func (s *Store) apply(ctx context.Context, file string, version int) error {
	body, err := migrations.ReadFile(file)
	if err != nil {
		return err
	}
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	var current int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return err
	}
	if current >= version { // another process migrated first
		return nil
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return fmt.Errorf("applying %s: %w", file, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version)); err != nil {
		return err
	}
	return tx.Commit()
}

// openError turns a driver error at open time into a coded error.
func openError(path string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		if c := fileError(path, se.Code(), err.Error()); c != nil {
			c.Message = "opening the store: " + c.Message + ": " + err.Error()
			return c
		}
	}
	return &apiv1.Error{Code: apiv1.CodeStoreOpen, File: path, Message: "opening the store: " + err.Error()}
}
