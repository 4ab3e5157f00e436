package sqlstore

import (
	"context"
	"database/sql"
	"maps"
	"slices"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// labelsPerInsert bounds the labels one INSERT writes (4 arguments each).
const labelsPerInsert = maxVars / 4

// putLabels writes run r's labels into run_labels, where the runs list's
// label selectors find them (see listQuery), each with the run's
// created_at, the list's order. A run's labels never change after it is
// created; DeleteRun removes them with the run.
func putLabels(ctx context.Context, tx *sql.Tx, r *apiv1.Run) error {
	keys := slices.Sorted(maps.Keys(r.Labels))
	for chunk := range slices.Chunk(keys, labelsPerInsert) {
		args := make([]any, 0, 4*len(chunk))
		for _, k := range chunk {
			args = append(args, r.ID, k, r.Labels[k], r.CreatedAt.UnixNano())
		}
		query := `INSERT INTO run_labels (run_id, key, value, created_at) VALUES (?,?,?,?)` +
			strings.Repeat(`,(?,?,?,?)`, len(chunk)-1)
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			return err
		}
	}
	return nil
}
