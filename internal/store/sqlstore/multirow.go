package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// A round writes each of its tables with one statement or few: the rows
// of a table go in INSERT … VALUES (…),(…) statements of 1, 2, 4, … rows,
// up to the largest power of two under rowVars placeholders (under both
// databases' limits on a statement's variables); n rows take the
// statements of n's binary digits, largest first. Those of up to
// preparedRows rows, what most rounds write, are prepared when the store
// opens (a statement prepared on the write pool during a transaction
// would wait for the pool's one connection, which the transaction holds);
// larger ones are parsed when run, their cost spread over their rows:
// keeping them all prepared cost a process 7 MiB.

// preparedRows is the most rows of a statement prepared once.
const preparedRows = 4

// rowVars bounds the placeholders of one multi-row statement.
const rowVars = 960

// rowsKind is a multi-row statement: head, then VALUES groups of cols
// placeholders each, then tail.
type rowsKind struct {
	head, tail string
	cols       int
}

// sizes are the numbers of rows k's statements write: 1, 2, 4, … up to
// the largest power of two of at most rowVars placeholders.
func (k *rowsKind) sizes() []int {
	sizes := []int{1}
	for n := 2; n*k.cols <= rowVars; n *= 2 {
		sizes = append(sizes, n)
	}
	return sizes
}

// text is k's statement for n rows.
func (k *rowsKind) text(n int) string {
	group := "(" + strings.TrimSuffix(strings.Repeat("?,", k.cols), ",") + ")"
	return k.head + " VALUES " + strings.TrimSuffix(strings.Repeat(group+",", n), ",") + " " + k.tail
}

var (
	attemptRows = &rowsKind{
		cols: 16, head: `INSERT INTO attempts (run_id, node, number, id, phase, exit_code, signal, code,
		message, system, started_at, finished_at, nodes, joined, dropped, logs_lost)`,
		tail: `ON CONFLICT (run_id, node, number) DO UPDATE SET
		phase = excluded.phase, exit_code = excluded.exit_code, signal = excluded.signal, code = excluded.code,
		message = excluded.message, system = excluded.system, started_at = excluded.started_at,
		finished_at = excluded.finished_at, nodes = excluded.nodes, joined = excluded.joined,
		dropped = excluded.dropped, logs_lost = excluded.logs_lost`,
	}
	nodeRows = &rowsKind{cols: 18, head: `INSERT INTO nodes (run_id, position, name, phase, kind, parent, code, message,
		started_at, finished_at, retry_at, outputs, conditions, replicas, children, gate, cache, version)`}
	eventRows = &rowsKind{cols: 9, head: `INSERT INTO events (run_id, node, attempt, phase, reason, code, message, time, term)`}
)

// rowStmts are the multi-row statements of each kind, by their rows.
type rowStmts map[*rowsKind][]*sql.Stmt

// prepare prepares the statements of every kind, for each of its sizes.
func (r rowStmts) prepare(ctx context.Context, db *sql.DB) error {
	for _, k := range []*rowsKind{attemptRows, nodeRows, eventRows} {
		for _, n := range k.sizes() {
			if n > preparedRows {
				break
			}
			st, err := db.PrepareContext(ctx, k.text(n))
			if err != nil {
				return err
			}
			r[k] = append(r[k], st)
		}
	}
	return nil
}

// close closes every statement prepared.
func (r rowStmts) close() error {
	var errs []error
	for _, list := range r {
		for _, st := range list {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// execRows writes the rows of args (k.cols values each, in order) in tx:
// the largest statement while it fits the rows left, then smaller ones.
func (s *Store) execRows(ctx context.Context, tx *sql.Tx, k *rowsKind, args []any) error {
	sizes := k.sizes()
	for i := len(sizes) - 1; i >= 0 && len(args) > 0; {
		n := sizes[i]
		if len(args) < n*k.cols {
			i--
			continue
		}
		var err error
		if i < len(s.rows[k]) {
			_, err = tx.StmtContext(ctx, s.rows[k][i]).ExecContext(ctx, args[:n*k.cols]...)
		} else {
			_, err = tx.ExecContext(ctx, k.text(n), args[:n*k.cols]...)
		}
		if err != nil {
			return err
		}
		args = args[n*k.cols:]
	}
	return nil
}
