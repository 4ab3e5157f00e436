package gc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// runName is what a run's ID looks like; other entries under RunsDir are
// not kiln's to remove.
var runName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

// orphans lists the directories under RunsDir, older than the grace
// period, whose run has no record: left by a run deleted while its
// directory could not be removed, or by a store that was replaced.
func (c *Collector) orphans(ctx context.Context) ([]Deletion, error) {
	if c.cfg.RunsDir == "" || c.cfg.Remover == nil {
		return nil, nil
	}
	entries, err := os.ReadDir(c.cfg.RunsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing run directories: %w", err)
	}
	old := c.cfg.Now().Add(-c.cfg.OrphanGrace)
	var ids []apiv1.RunID
	age := map[apiv1.RunID]time.Time{}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !e.IsDir() || !runName.MatchString(e.Name()) || info.ModTime().After(old) {
			continue
		}
		id := apiv1.RunID(e.Name())
		ids, age[id] = append(ids, id), info.ModTime()
	}
	missing, err := c.cfg.Store.MissingRuns(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("looking up run directories' runs: %w", err)
	}
	out := make([]Deletion, 0, len(missing))
	for _, id := range missing {
		out = append(out, Deletion{Run: id, Reason: ReasonOrphan, Detail: fmt.Sprintf(
			"directory %s/%s has no run; last changed %s", c.cfg.RunsDir, id, age[id].Format(time.RFC3339))})
	}
	return out, nil
}
