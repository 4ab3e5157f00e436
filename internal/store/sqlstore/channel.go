package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// The columns that name a message at one end, after run_id.
const channelKeyCols = `task = ? AND attempt = ? AND role = ? AND party = ? AND peer_role = ? AND name = ?`

func keyArgs(id apiv1.RunID, k store.ChannelKey) []any {
	return []any{id, k.Task, k.Attempt, k.Role, k.Party, k.PeerRole, k.Name}
}

// PutChunk implements store.Channel. The run's check, the piece and the
// message's count share one transaction.
func (s *Store) PutChunk(ctx context.Context, id apiv1.RunID, c store.ChannelChunk) (whole bool, err error) {
	defer s.coded(&err)
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		if err := liveRun(ctx, tx, id); err != nil {
			return err
		}
		k := c.Key
		if _, err := tx.ExecContext(ctx, `INSERT INTO channel_messages (run_id, direction, task, attempt, role, party, peer_role, name, size, digest, chunks)
			VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING`,
			id, apiv1.ChannelReceived, k.Task, k.Attempt, k.Role, k.Party, k.PeerRole, k.Name, c.Size, c.Digest, c.Chunks); err != nil {
			return err
		}
		var size int64
		var digest string
		var chunks, arrived int
		var at int64
		args := keyArgs(id, k)
		if err := tx.QueryRowContext(ctx, `SELECT size, digest, chunks, arrived, at FROM channel_messages WHERE run_id = ? AND direction = 'received' AND `+channelKeyCols, args...).
			Scan(&size, &digest, &chunks, &arrived, &at); err != nil {
			return err
		}
		if size != c.Size || digest != c.Digest || chunks != c.Chunks {
			return fmt.Errorf("message %s was received before with %d bytes (%s) in %d pieces: %w", k.Name, size, digest, chunks, store.ErrConflict)
		}
		if at != 0 { // whole already, taken or not
			whole = true
			return nil
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO channel_chunks (run_id, task, attempt, role, party, peer_role, name, idx, data)
			VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING`, append(args, c.Index, c.Data)...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		arrived++
		whole = arrived == chunks
		done := int64(0)
		if whole {
			done = c.At.UnixNano()
		}
		_, err = tx.ExecContext(ctx, `UPDATE channel_messages SET arrived = ?, at = ? WHERE run_id = ? AND direction = 'received' AND `+channelKeyCols,
			append([]any{arrived, done}, args...)...)
		return err
	})
	return whole, err
}

// liveRun refuses to write for a run that is not there (ErrNotFound), or
// that ended (a *PhaseError).
func liveRun(ctx context.Context, tx *sql.Tx, id apiv1.RunID) error {
	var phase apiv1.Phase
	var done bool
	err := tx.QueryRowContext(ctx, `SELECT phase, done FROM runs WHERE id = ?`, id).Scan(&phase, &done)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("run %s: %w", id, store.ErrNotFound)
	case err != nil:
		return err
	case done:
		return &store.PhaseError{Run: id, Phase: phase}
	}
	return nil
}

// ReceivedChunk implements store.Channel.
func (s *Store) ReceivedChunk(ctx context.Context, id apiv1.RunID, key store.ChannelKey, index int) (_ apiv1.ChannelMessage, _ []byte, err error) {
	defer s.coded(&err)
	m, err := scanChannel(s.db.QueryRowContext(ctx, `SELECT `+channelCols+` FROM channel_messages
		WHERE run_id = ? AND direction = 'received' AND `+channelKeyCols+` AND at <> 0 AND taken IS NULL`, keyArgs(id, key)...))
	if err != nil {
		return m, nil, err
	}
	var data []byte
	err = s.db.QueryRowContext(ctx, `SELECT data FROM channel_chunks WHERE run_id = ? AND `+channelKeyCols+` AND idx = ?`,
		append(keyArgs(id, key), index)...).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return m, nil, fmt.Errorf("message %s has no piece %d: %w", key.Name, index, store.ErrNotFound)
	}
	return m, data, err
}

// TakeMessage implements store.Channel.
func (s *Store) TakeMessage(ctx context.Context, id apiv1.RunID, key store.ChannelKey, at time.Time) (err error) {
	defer s.coded(&err)
	return s.withTx(ctx, func(tx *sql.Tx) error {
		args := keyArgs(id, key)
		res, err := tx.ExecContext(ctx, `UPDATE channel_messages SET taken = COALESCE(taken, ?)
			WHERE run_id = ? AND direction = 'received' AND `+channelKeyCols+` AND at <> 0`, append([]any{at.UnixNano()}, args...)...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("no whole message %s from %s (%s): %w", key.Name, key.Party, key.PeerRole, store.ErrNotFound)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM channel_chunks WHERE run_id = ? AND `+channelKeyCols, args...)
		return err
	})
}

// LogMessage implements store.Channel.
func (s *Store) LogMessage(ctx context.Context, id apiv1.RunID, m apiv1.ChannelMessage) (err error) {
	defer s.coded(&err)
	return s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO channel_messages (run_id, direction, task, attempt, role, party, peer_role, name, size, digest, chunks, arrived, at)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING`,
			id, m.Direction, m.Task, m.Attempt, m.Role, m.Party, m.PeerRole, m.Name, m.Size, m.Digest, m.Chunks, m.Chunks, m.At.UnixNano()); err != nil {
			return err
		}
		var digest string
		err := tx.QueryRowContext(ctx, `SELECT digest FROM channel_messages WHERE run_id = ? AND direction = ? AND `+channelKeyCols,
			append([]any{id, m.Direction}, keyArgs("", store.ChannelKey{Task: m.Task, Attempt: m.Attempt, Role: m.Role, Party: m.Party, PeerRole: m.PeerRole, Name: m.Name})[1:]...)...).Scan(&digest)
		if err == nil && digest != m.Digest {
			return fmt.Errorf("message %s was sent before with other content (%s): %w", m.Name, digest, store.ErrConflict)
		}
		return err
	})
}

const channelCols = `direction, task, attempt, role, party, peer_role, name, size, digest, chunks, at, taken`

// scanChannel scans one row of channelCols.
func scanChannel(row interface{ Scan(...any) error }) (apiv1.ChannelMessage, error) {
	var m apiv1.ChannelMessage
	var at int64
	var taken sql.NullInt64
	err := row.Scan(&m.Direction, &m.Task, &m.Attempt, &m.Role, &m.Party, &m.PeerRole, &m.Name, &m.Size, &m.Digest, &m.Chunks, &at, &taken)
	if errors.Is(err, sql.ErrNoRows) {
		return m, fmt.Errorf("no such whole message: %w", store.ErrNotFound)
	}
	m.At = time.Unix(0, at).UTC()
	m.Taken = timeOf(taken)
	return m, err
}

// ChannelLog implements store.Channel.
func (s *Store) ChannelLog(ctx context.Context, id apiv1.RunID) (_ []apiv1.ChannelMessage, err error) {
	defer s.coded(&err)
	rows, err := s.db.QueryContext(ctx, `SELECT `+channelCols+` FROM channel_messages WHERE run_id = ? AND at <> 0
		ORDER BY at, direction, task, attempt, party, peer_role, name`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []apiv1.ChannelMessage
	for rows.Next() {
		m, err := scanChannel(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// DropEndedChannels implements store.Channel.
func (s *Store) DropEndedChannels(ctx context.Context) (_ int64, err error) {
	defer s.coded(&err)
	res, err := s.db.ExecContext(ctx, `DELETE FROM channel_chunks WHERE run_id IN (SELECT id FROM runs WHERE done <> 0)`)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
