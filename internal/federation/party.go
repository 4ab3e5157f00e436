// Package federation runs the attempts of federated tasks: each attempt's
// shares run at other kiln servers (parties), which the initiator's
// coordinator drives level-based through their API (see
// docs/design/0015-federation.md).
package federation

import (
	"context"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Party is one party's server as the initiator reaches it: the four calls
// of the federation API. Each is idempotent. A party's refusal is an
// *apiv1.Error; any other error means it could not be reached, and the
// call may be repeated.
type Party interface {
	CreatePart(ctx context.Context, req apiv1.PartRequest) (apiv1.PartStatus, error)
	PartStatus(ctx context.Context, run apiv1.RunID) (apiv1.PartStatus, error)
	OrderShare(ctx context.Context, run apiv1.RunID, task string, o apiv1.ShareOrder) (apiv1.ShareStatus, error)
	StopPart(ctx context.Context, run apiv1.RunID, how string) error
	// CheckPart asks whether the party would create its part of
	// req.Run (req.Run may be empty: the run is not submitted yet),
	// keeping nothing: its refusal is the one CreatePart would give.
	CheckPart(ctx context.Context, req apiv1.PartRequest) error
}

// Directory finds the parties this server trusts, by name. An unknown
// party is an *apiv1.Error.
type Directory interface {
	Party(ctx context.Context, name string) (Party, error)
}

// Runs reads the initiator's runs: the coordinator reads a federated
// run's workflow and params to create its parts.
type Runs interface {
	GetRun(ctx context.Context, id apiv1.RunID) (*apiv1.Run, error)
}

// Ways a part is stopped (Party.StopPart).
const (
	// StopCancel cancels the part: the federated run was cancelled.
	StopCancel = "cancel"
	// StopEnd ends the part's shares that have not ended, once the
	// federated run succeeded: they will never run.
	StopEnd = "end"
	// StopFail ends them once the federated run failed: they fail too.
	StopFail = "fail"
)
