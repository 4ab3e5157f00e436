package cli

import (
	"context"
	"os"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/client"
	"kiln.dev/kiln/internal/store"
)

// runReader is what the watcher and describe read: the store in embedded
// mode, the API with --server.
type runReader interface {
	GetRun(ctx context.Context, id apiv1.RunID) (*apiv1.Run, error)
	ListEvents(ctx context.Context, p store.ListEventsParams) ([]apiv1.Event, error)
}

// remoteReader reads runs through the API.
type remoteReader struct{ c *client.Client }

func (r remoteReader) GetRun(ctx context.Context, id apiv1.RunID) (*apiv1.Run, error) {
	return r.c.GetRun(ctx, id)
}

func (r remoteReader) ListEvents(ctx context.Context, p store.ListEventsParams) ([]apiv1.Event, error) {
	return r.c.Events(ctx, p.Run, p.After)
}

// remote returns a client when --server (or KILN_SERVER) names a server,
// with the token in KILN_TOKEN; nil means embedded mode.
func (e *env) remote() *client.Client {
	if e.server == "" {
		return nil
	}
	return client.New(e.server, os.Getenv("KILN_TOKEN"))
}
