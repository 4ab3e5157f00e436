package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// migrateLock is the advisory lock key that migrations hold, so that
// replicas starting together migrate one after the other.
const migrateLock = 0x6b696c6e_0001 // "kiln", 1

// migrate applies the migrations the database lacks, all in one
// transaction: PostgreSQL's DDL is transactional, so a failed migration
// leaves the schema as it was. A new database is made from schema (see
// schemaFile) and takes in turn only the migrations it lacks; an empty
// schema applies every migration in turn. The version is kept in
// kiln_schema.
func migrate(ctx context.Context, db *sql.DB, d dialect, schema string) error {
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	slices.Sort(files)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return d.open(err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	version, err := schemaVersion(ctx, tx)
	if err != nil {
		return d.open(err)
	}
	if version > len(files) {
		return &apiv1.Error{
			Code: apiv1.CodeStoreVersion, File: d.where,
			Message: fmt.Sprintf("store schema version %d is newer than this kiln knows (%d)", version, len(files)),
		}
	}
	if version == 0 {
		if version, err = createSchema(ctx, tx, schema); err != nil {
			return d.open(err)
		}
	}
	for i := version; i < len(files); i++ {
		body, err := migrations.ReadFile(files[i])
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return d.open(fmt.Errorf("applying %s: %w", files[i], err))
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE kiln_schema SET version = ?`, len(files)); err != nil {
		return d.open(err)
	}
	return d.open(tx.Commit())
}

// schemaVersion locks out other migrators and reads the schema version,
// making the version table on a new database.
func schemaVersion(ctx context.Context, tx *sql.Tx) (int, error) {
	// Another replica's migration may take long: wait for it, whatever
	// the session's lock_timeout.
	if _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = 0`); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, int64(migrateLock)); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS kiln_schema (version BIGINT NOT NULL)`); err != nil {
		return 0, err
	}
	var version int
	err := tx.QueryRowContext(ctx, `SELECT version FROM kiln_schema`).Scan(&version)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, `INSERT INTO kiln_schema (version) VALUES (0)`)
	}
	return version, err
}
