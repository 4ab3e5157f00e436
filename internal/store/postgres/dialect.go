package postgres

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// writeLock is the advisory lock key every write transaction holds.
const writeLock = 0x6b696c6e_0002 // "kiln", 2

// dialect is PostgreSQL's sqlstore.Dialect for the database named where.
type dialect struct{ where string }

// BeginWrite implements sqlstore.Dialect: it waits for the one writer
// lock of the database, held until the transaction ends.
func (dialect) BeginWrite(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, int64(writeLock))
	return err
}

// IsConflict implements sqlstore.Dialect: unique_violation.
func (dialect) IsConflict(err error) bool { return sqlState(err) == "23505" }

// LockRows implements sqlstore.Dialect.
func (dialect) LockRows() string { return " FOR UPDATE" }

// Coded implements sqlstore.Dialect: errors about the server (gone, full,
// damaged, refusing the login) name it; errors about a query are nil.
func (d dialect) Coded(err error) error {
	if c := d.classify(err); c != nil {
		return c
	}
	return nil // not a nil *apiv1.Error in an error
}

// open codes an error met while opening: the server's, or else KLN-5001.
func (d dialect) open(err error) error {
	if err == nil {
		return nil
	}
	if c := d.classify(err); c != nil {
		return c
	}
	return &apiv1.Error{Code: apiv1.CodeStoreOpen, File: d.where, Message: "opening the store: " + err.Error()}
}

// classify is the coded error for err, or nil.
func (d dialect) classify(err error) *apiv1.Error {
	code, msg := apiv1.Code(""), ""
	switch state := sqlState(err); {
	case state == "28P01" || state == "28000":
		code, msg = apiv1.CodePGAuth, "the PostgreSQL server refused the login"
	case state == "3D000" || state == "42501" && isConnect(err):
		code, msg = apiv1.CodePGDatabase, "the database cannot be used"
	case state == "55P03":
		code, msg = apiv1.CodeStoreBusy, "a write waited too long for the store's write lock"
	case state == "53100":
		code, msg = apiv1.CodeStoreFull, "the disk holding the PostgreSQL database is full"
	case state == "XX001" || state == "XX002":
		code, msg = apiv1.CodeStoreCorrupt, "the PostgreSQL database is damaged"
	case state == "42P01" || state == "42703": // undefined table or column
		return &apiv1.Error{
			Code: apiv1.CodeStoreCorrupt, File: d.where,
			Message: "the database has lost part of kiln's tables: they were dropped or changed by hand: " + strings.Join(strings.Fields(err.Error()), " "),
			Hint:    "restore the database from a backup, or point --store at a new, empty database, which kiln fills",
		}
	case state == "57P01" || state == "57P02" || state == "57P03" || isConnect(err):
		code, msg = apiv1.CodePGUnreachable, "the PostgreSQL server cannot be reached"
	default:
		return nil
	}
	detail := strings.Join(strings.Fields(err.Error()), " ") // pgx lists each address tried on a line
	return &apiv1.Error{Code: code, File: d.where, Message: msg + ": " + detail}
}

// sqlState is the SQLSTATE of err, or "" if the server sent none.
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// isConnect tells an error connecting to the server, or a connection
// lost: no SQLSTATE, or class 08 (connection exception).
func isConnect(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) {
		return true
	}
	s := sqlState(err)
	return len(s) == 5 && s[:2] == "08"
}
