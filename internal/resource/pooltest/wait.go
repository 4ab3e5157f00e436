package pooltest

import (
	"context"
	"time"
)

const testTimeout = 10 * time.Second

// pause waits a little, or until ctx ends.
func pause(ctx context.Context) {
	t := time.NewTimer(10 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
