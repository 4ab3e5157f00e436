// Package postgres is the store for a team's server: kiln's tables in a
// PostgreSQL database, which several `kiln serve` replicas share. The SQL
// is sqlstore's, written once for SQLite and PostgreSQL; this package
// opens the database (pgx, through database/sql), brings its schema up to
// date from the embedded migrations, and supplies the dialect. A new
// database is made from schema.sql (pg_dump's schema of a database
// migrated step by step); after a new migration, `go generate
// ./internal/store/...` rewrites it (TestSchemaFile fails until it does).
//
// PostgreSQL runs transactions at READ COMMITTED, where a row read may
// change before the transaction commits. Every write transaction
// therefore takes one transaction-scoped advisory lock first
// (pg_advisory_xact_lock): writers of one database, in any process,
// commit one at a time, as SQLite's IMMEDIATE transactions do, and each
// check-then-write sees the rows it checked unchanged. Writes outside a
// transaction are single conditional statements; a fence that reads a
// run's owner locks its row (FOR UPDATE), so a lease cannot be claimed
// away between the check and the commit. Event sequence numbers come from
// an identity column and are taken under the writer lock, so they grow in
// commit order.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a store.Store on a PostgreSQL database.
type Store struct {
	*sqlstore.Store
	db *sql.DB
}

var _ store.Store = (*Store)(nil)

// Options tune the store.
type Options struct {
	// SecretKeyFile is where the key that seals secret values is kept
	// (KILN_SECRET_KEY_FILE). It must be given: there is no directory
	// beside the database to keep it in. Every replica must read the same
	// key; it is made on first use.
	SecretKeyFile string
	// MaxConns bounds the connections this process opens; default 16.
	MaxConns int
}

// Open connects to the database at dsn (a postgres:// URL or a key=value
// string, as libpq takes them, PG* environment variables included) and
// brings its schema up to date. Its errors are *apiv1.Error with a code:
// KLN-5040 to KLN-5044 for the address, the server, the login, the
// database and the key file; they name the host and database, never the
// password.
func Open(ctx context.Context, dsn string, opt Options) (*Store, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, &apiv1.Error{Code: apiv1.CodePGAddress, Message: "the PostgreSQL address does not parse: " + err.Error()}
	}
	where := describe(cfg)
	if opt.SecretKeyFile == "" {
		return nil, &apiv1.Error{Code: apiv1.CodePGSecretKey, Message: fmt.Sprintf(
			"the store at %s needs a secret key file: set KILN_SECRET_KEY_FILE to a file every replica reads", where)}
	}
	// A writer frozen inside a transaction (SIGSTOP, a stalled VM) would
	// hold the write lock from every other replica: the server ends its
	// session after 5 s idle, well within a leader's lease. Its other
	// connections, queued for the lock before it froze, must not take the
	// lock in turn and freeze it 5 s more each: a wait for a lock gives
	// up after 3 s (a writer holds it for milliseconds), so by the time
	// the frozen session ends they have all given up.
	for param, ms := range map[string]string{"idle_in_transaction_session_timeout": "5000", "lock_timeout": "3000"} {
		if cfg.RuntimeParams[param] == "" {
			cfg.RuntimeParams[param] = ms
		}
	}
	db := sql.OpenDB(rebinder{stdlib.GetConnector(*cfg)})
	conns := opt.MaxConns
	if conns <= 0 {
		conns = 16
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	d := dialect{where: where}
	if err := migrate(ctx, db, d, schemaFile); err != nil {
		db.Close()
		return nil, err
	}
	s, err := sqlstore.New(ctx, db, db, d, opt.SecretKeyFile)
	if err != nil {
		db.Close()
		return nil, d.open(err)
	}
	return &Store{Store: s, db: db}, nil
}

// describe names the server and database of cfg for messages: user, host,
// port and database, never the password.
func describe(cfg *pgx.ConnConfig) string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}

// Where names the database at dsn as kiln's messages do,
// postgres://USER@HOST:PORT/DATABASE, without the password; "" if dsn
// does not parse.
func Where(dsn string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return ""
	}
	return describe(cfg)
}
