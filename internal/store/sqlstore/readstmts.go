package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// readStmts are the read pool's prepared statements, by their text: a
// page of runs, or a request's token, is read thousands of times a
// second on a busy server, and SQLite parsed it each time at about the
// cost of a page's scan. The texts that go through here vary only with
// the number of a filter's values, so there are few; past
// maxReadStmts, a text is parsed when run, as before.
type readStmts struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// maxReadStmts bounds the statements kept prepared.
const maxReadStmts = 32

// stmt is the statement of text prepared on db, or nil where there is no
// room for another or it does not prepare (then it is run unprepared,
// and says why).
func (r *readStmts) stmt(ctx context.Context, db *sql.DB, text string) *sql.Stmt {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.m[text]; ok {
		return st
	}
	if len(r.m) >= maxReadStmts {
		return nil
	}
	st, err := db.PrepareContext(ctx, text)
	if err != nil {
		return nil
	}
	r.m[text] = st
	return st
}

// close closes every statement prepared.
func (r *readStmts) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for text, st := range r.m {
		errs = append(errs, st.Close())
		delete(r.m, text)
	}
	return errors.Join(errs...)
}

// queryRead runs the read query text with args: prepared once on the
// read pool, or as it is inside a snapshot, whose transaction holds its
// own connection.
func (s *Store) queryRead(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	if s.db == reader(s.pool) {
		if st := s.reads.stmt(ctx, s.pool, text); st != nil {
			return st.QueryContext(ctx, args...)
		}
	}
	return s.db.QueryContext(ctx, text, args...)
}

// queryReadRow is queryRead for one row.
func (s *Store) queryReadRow(ctx context.Context, text string, args ...any) *sql.Row {
	if s.db == reader(s.pool) {
		if st := s.reads.stmt(ctx, s.pool, text); st != nil {
			return st.QueryRowContext(ctx, args...)
		}
	}
	return s.db.QueryRowContext(ctx, text, args...)
}

// prepared is a querier that reads through queryReadRow.
type prepared struct{ s *Store }

// QueryRowContext implements querier.
func (p prepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return p.s.queryReadRow(ctx, query, args...)
}
