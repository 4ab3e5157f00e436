package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// ErrKeyTaken is CreateRun's refusal of a run whose submission key
// (CreateRunParams.Key) a run of the same project was created with
// already: that run is SubmitKeys.GetSubmitKey's answer.
var ErrKeyTaken = errors.New("store: submission key taken")

// SubmitKeys finds the runs created with a submission key (a client's
// Idempotency-Key), so that a submission sent again finds its first run.
type SubmitKeys interface {
	// GetSubmitKey returns the key that project's run was created with,
	// or ErrNotFound if there is none created at or after since: older
	// keys have expired. A key lives as long as its run: deleting the run
	// deletes it.
	GetSubmitKey(ctx context.Context, project, key string, since time.Time) (*SubmitKey, error)
}

// SubmitKey is a submission key and the run created with it.
type SubmitKey struct {
	// Project scopes the key: the same key in another project is another.
	Project string
	Key     string
	// Digest identifies the submission (files, params, options) the run
	// was created from; the same key with another digest is a mistake.
	Digest string
	Run    apiv1.RunID
	// CreatedAt is the run's creation time.
	CreatedAt time.Time
}

// NewSubmitKey is the key a run is created with (CreateRunParams.Key):
// it is stored in the transaction that creates the run, in the run's
// project, so that a run exists with the key if and only if the key does.
type NewSubmitKey struct {
	Key    string
	Digest string
	// Since is when keys still held start: keys created before it have
	// expired, are removed, and may be taken again.
	Since time.Time
}

// KeyedRuns finds runs by their submission keys.
type KeyedRuns interface {
	SubmitKeys
	GetRun(ctx context.Context, id apiv1.RunID) (*apiv1.Run, error)
}

// FirstRun is the run an earlier submission with key created in project
// at or after since, nil if there is none. The key sent with another
// submission (digest) is KLN-4061.
func FirstRun(ctx context.Context, st KeyedRuns, project, key, digest string, since time.Time) (*apiv1.Run, error) {
	k, err := st.GetSubmitKey(ctx, project, key, since)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	case k.Digest != digest:
		return nil, &apiv1.Error{
			Code: apiv1.CodeKeyReused, Field: "idempotency key", Object: "Run/" + string(k.Run),
			Message: fmt.Sprintf("key %q created run %s from a different submission", key, k.Run),
		}
	}
	return st.GetRun(ctx, k.Run)
}
