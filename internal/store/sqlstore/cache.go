package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// PutCacheEntry implements store.Caches.
func (s *Store) PutCacheEntry(ctx context.Context, e *apiv1.CacheEntry) (err error) {
	defer s.coded(&err)
	var expires int64
	if e.ExpiresAt != nil {
		expires = e.ExpiresAt.UnixNano()
	}
	return s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO cache_entries
			(key, project, workflow, task, entry, size, created_at, used_at, expires_at) VALUES (?,?,?,?,?,?,?,?,?)
			ON CONFLICT (key) DO UPDATE SET project = excluded.project, workflow = excluded.workflow,
			task = excluded.task, entry = excluded.entry, size = excluded.size, created_at = excluded.created_at,
			used_at = excluded.used_at, expires_at = excluded.expires_at`,
			e.Key, e.Project, e.Workflow, e.Task, mustJSON(e), e.Size, e.CreatedAt.UnixNano(), e.UsedAt.UnixNano(), expires); err != nil {
			return fmt.Errorf("storing cache entry %s: %w", e.Key, err)
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM cache_reservations WHERE key = ?`, e.Key)
		return err
	})
}

// CacheEntry implements store.Caches.
func (s *Store) CacheEntry(ctx context.Context, key string) (_ *apiv1.CacheEntry, err error) {
	defer s.coded(&err)
	row := s.db.QueryRowContext(ctx, `SELECT entry, used_at FROM cache_entries WHERE key = ?`, key)
	e, err := scanCacheEntry(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("cache entry %s: %w", key, store.ErrNotFound)
	}
	return e, err
}

func scanCacheEntry(scan func(...any) error) (*apiv1.CacheEntry, error) {
	var body string
	var used int64
	if err := scan(&body, &used); err != nil {
		return nil, err
	}
	e := &apiv1.CacheEntry{}
	if err := json.Unmarshal([]byte(body), e); err != nil {
		return nil, fmt.Errorf("reading a cache entry: %w", err)
	}
	e.UsedAt = fromNanos(used)
	return e, nil
}

// UseCacheEntry implements store.Caches.
func (s *Store) UseCacheEntry(ctx context.Context, key string, at time.Time) (err error) {
	defer s.coded(&err)
	res, err := s.wdb.ExecContext(ctx, `UPDATE cache_entries SET used_at = ? WHERE key = ?`, at.UnixNano(), key)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("cache entry %s: %w", key, store.ErrNotFound)
	}
	return nil
}

// ListCacheEntries implements store.Caches.
func (s *Store) ListCacheEntries(ctx context.Context, q apiv1.CacheQuery) (_ []*apiv1.CacheEntry, err error) {
	defer s.coded(&err)
	var where []string
	var args []any
	for _, f := range []struct{ col, v string }{{"project", q.Project}, {"workflow", q.Workflow}, {"task", q.Task}} {
		if f.v != "" {
			where, args = append(where, f.col+" = ?"), append(args, f.v)
		}
	}
	query := `SELECT entry, used_at FROM cache_entries`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := s.db.QueryContext(ctx, query+" ORDER BY used_at DESC, key", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*apiv1.CacheEntry{}
	for rows.Next() {
		e, err := scanCacheEntry(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// DeleteCacheEntries implements store.Caches.
func (s *Store) DeleteCacheEntries(ctx context.Context, keys []string) (n int, err error) {
	defer s.coded(&err)
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		for _, k := range keys {
			res, err := tx.ExecContext(ctx, `DELETE FROM cache_entries WHERE key = ?`, k)
			if err != nil {
				return err
			}
			d, _ := res.RowsAffected()
			n += int(d)
		}
		return nil
	})
	return n, err
}

// ReserveCacheKey implements store.Caches.
func (s *Store) ReserveCacheKey(ctx context.Context, p store.ReserveCacheKeyParams) (holder string, err error) {
	defer s.coded(&err)
	err = s.wdb.QueryRowContext(ctx, `INSERT INTO cache_reservations (key, holder, owner, until) VALUES (?,?,?,?)
		ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, owner = excluded.owner, until = excluded.until
		WHERE cache_reservations.holder = excluded.holder OR cache_reservations.until <= ?
		RETURNING holder`, p.Key, p.Holder, p.Owner, p.Until.UnixNano(), p.Now.UnixNano()).Scan(&holder)
	if errors.Is(err, sql.ErrNoRows) { // another holder's reservation stands
		err = s.db.QueryRowContext(ctx, `SELECT holder FROM cache_reservations WHERE key = ?`, p.Key).Scan(&holder)
	}
	return holder, err
}

// ReleaseCacheKey implements store.Caches.
func (s *Store) ReleaseCacheKey(ctx context.Context, key, holder string) (err error) {
	defer s.coded(&err)
	_, err = s.wdb.ExecContext(ctx, `DELETE FROM cache_reservations WHERE key = ? AND holder = ?`, key, holder)
	return err
}
