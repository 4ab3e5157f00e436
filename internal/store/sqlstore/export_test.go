package sqlstore

import "kiln.dev/kiln/internal/store"

// ListQuery is listQuery, for the tests of its plans.
func (s *Store) ListQuery(p store.ListRunsParams) (string, []any, error) { return s.listQuery(p) }
