// Package store defines how kiln keeps runs: the Store interface, its
// parameter structs and its errors. The store is the source of truth; the
// engine writes every transition to it before acting on it.
//
// Implementations live in subpackages (sqlite) and must pass storetest.Run.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Errors every implementation returns, so callers can use errors.Is.
var (
	ErrNotFound  = errors.New("store: not found")
	ErrConflict  = errors.New("store: already exists")
	ErrLeaseLost = errors.New("store: lease held by another owner")
	// ErrPhase is returned for a request the run's phase does not allow:
	// cancelling or suspending a run that ended, retrying one that did not fail.
	ErrPhase = errors.New("store: not allowed in the run's phase")
)

// PhaseError is ErrPhase with the phase the run was in.
type PhaseError struct {
	Run   apiv1.RunID
	Phase apiv1.Phase
}

func (e *PhaseError) Error() string {
	return fmt.Sprintf("run %s is %s: %v", e.Run, e.Phase, ErrPhase)
}

// Is makes errors.Is(err, ErrPhase) hold for a *PhaseError.
func (e *PhaseError) Is(target error) bool { return target == ErrPhase }

// Store is everything kiln keeps. It is safe for concurrent use, and by
// several processes sharing one file.
type Store interface {
	Runs
	Writer
	Leaser
	Tokens
	Secrets
	Gates
	Templates
	Schedules
	Runtimes
	Caches
	Life
	Parties
	Federation
	Channel
	Leadership
	Quotas
	SubmitKeys
	// Close releases the store's files and connections.
	Close() error
}

// Runs reads runs and takes requests about them.
type Runs interface {
	// CreateRun saves a new run in phase Pending (or the run's own phase,
	// for imports) with one Pending node per task (or as preset, see
	// CreateRunParams.Preset), and its first event, in one transaction.
	// Its progress is the run's, if set, else its tasks, none done. It
	// returns ErrConflict if the ID is taken.
	CreateRun(ctx context.Context, p CreateRunParams) error
	// GetRun returns the run with its nodes and attempts, or ErrNotFound.
	GetRun(ctx context.Context, id apiv1.RunID) (*apiv1.Run, error)
	// GetRunHead is GetRun without the run's nodes.
	GetRunHead(ctx context.Context, id apiv1.RunID) (*apiv1.Run, error)
	// ListNodes returns a page of a run's nodes in the run's order, as p
	// selects them, with their attempts; ErrNotFound for no such run.
	ListNodes(ctx context.Context, p ListNodesParams) (*NodePage, error)
	// ListRuns returns runs newest first, without nodes (their progress
	// counts them).
	ListRuns(ctx context.Context, p ListRunsParams) ([]*apiv1.Run, error)
	// CountRuns counts every run by phase.
	CountRuns(ctx context.Context) (map[apiv1.Phase]int, error)
	// ListEvents returns a run's events with Seq > p.After, oldest first.
	ListEvents(ctx context.Context, p ListEventsParams) ([]apiv1.Event, error)
	// CountEvents counts a run's events with Seq > after.
	CountEvents(ctx context.Context, run apiv1.RunID, after int64) (int, error)
	// RequestCancel marks a run to be cancelled by its owner, and records
	// who asked (by, if not empty) in a CancelRequested event; asked again,
	// it changes nothing and records nothing. It returns ErrPhase for a run
	// that has ended and ErrNotFound for an unknown one.
	RequestCancel(ctx context.Context, id apiv1.RunID, by string) error
	// RequestStop marks a run to be stopped by its owner: ended, its exit
	// handlers run (a cancel requested before wins, and the stop is not
	// recorded); a StopRequested event names who asked, once. ErrPhase for
	// a run that has ended, ErrNotFound for an unknown one.
	RequestStop(ctx context.Context, id apiv1.RunID, by string) error
	// RetryRun makes a Failed or Cancelled run Pending again, owned by
	// r.Owner until r.Until: its tasks that did not succeed, and those
	// r.Restart names with their children, become Pending (their gate
	// status and gate inputs dropped: a gate waits afresh; their trainer
	// status dropped: they report afresh), the others keep their outputs,
	// and the run's progress is counted afresh from its nodes. Preset
	// nodes (CreateRunParams) keep their state: a rerun's tasks left out
	// stay out. A suspension asked before it ended is dropped: a retry
	// runs. ErrPhase if the run has not ended or succeeded.
	RetryRun(ctx context.Context, id apiv1.RunID, r Retry) error
	// RequestSuspend sets whether a run should be suspended, for its
	// owner to act on, and records who asked in a SuspendRequested or
	// UnsuspendRequested event, when that changes it. ErrPhase for a run
	// that has ended, ErrNotFound for an unknown one.
	RequestSuspend(ctx context.Context, id apiv1.RunID, suspend bool, by string) error
}

// Retry is how RetryRun tries a run again.
type Retry struct {
	Owner string    // the engine that owns the run from now on
	Until time.Time // until when its lease holds
	// Restart names nodes that run again even if they succeeded (the
	// exit handler, which runs at each end of the run), their children
	// included: a child of node N is named N.something.
	Restart []string
	// Params, if not nil, replace the run's params.
	Params map[string]string
	// By names who asked for the retry, for its event; may be empty.
	By string
}

// Writer saves what one reconcile round changed.
type Writer interface {
	// Apply writes c in one transaction if c.Owner still holds the run's
	// lease, and returns ErrLeaseLost otherwise, writing nothing.
	Apply(ctx context.Context, c *Change) error
}

// Claim is a run ClaimRuns gave its owner, and the owner that held it
// before: the claimer itself when it renewed its own, "" when none did.
type Claim struct {
	ID   apiv1.RunID
	From string
}

// Leaser hands out ownership of runs, so one engine works a run at a time.
type Leaser interface {
	// ClaimRuns gives p.Owner every unfinished run whose lease is free,
	// expired, or held by an owner p.IsDead says is gone, and returns
	// them with the owner each had. A claim is a compare-and-swap: of two
	// engines claiming at once, one wins each run.
	ClaimRuns(ctx context.Context, p ClaimRunsParams) ([]Claim, error)
	// RenewLeases extends the lease of every unfinished run p.Owner holds
	// to p.Until, and the cache reservations it holds with them, and
	// returns what was asked of each of its runs.
	RenewLeases(ctx context.Context, p RenewLeasesParams) ([]Request, error)
	// ReleaseLease gives up owner's lease on run id, if it holds it.
	ReleaseLease(ctx context.Context, id apiv1.RunID, owner string) error
}

// CreateRunParams is a new run.
type CreateRunParams struct {
	Run apiv1.Run
	// Nodes are the task names, in the workflow's order.
	Nodes []string
	// Kinds are the tasks' kinds, in the same order; may be empty.
	Kinds []apiv1.NodeKind
	// Preset are nodes of Nodes that start in a final phase instead of
	// Pending, with their code, message, outputs and Reused: a rerun's
	// reused nodes (Succeeded) and the nodes it leaves out (Skipped).
	// Run.RerunOf is saved with the run.
	Preset []apiv1.NodeStatus
	// Events are recorded with the run after its Submitted event: warnings
	// about what was submitted (fields a backend ignores).
	Events []apiv1.Event
	// Owner gets the run's lease until LeaseUntil; empty leaves it free.
	Owner      string
	LeaseUntil time.Time
	// Term, when not 0, is the leadership term Owner creates the run
	// under: refused with ErrFenced unless it is still the current one.
	Term int64
	// Key, if not nil, is stored with the run (see SubmitKeys): a key the
	// run's project holds already refuses the run with ErrKeyTaken.
	Key *NewSubmitKey
}

// ListRunsParams filters and pages ListRuns.
type ListRunsParams struct {
	// Phase keeps runs in this phase; empty keeps all.
	Phase apiv1.Phase
	// Phases keeps runs in any of these phases (with Phase, in any of
	// them); empty keeps all.
	Phases []apiv1.Phase
	// Since keeps runs created at or after it; zero keeps all.
	Since time.Time
	// Until keeps runs created before it; zero keeps all.
	Until time.Time
	// Search keeps runs whose ID or workflow name holds it, in any case.
	Search string
	// Ascending orders runs oldest first, and After then holds runs
	// newer than it; the default is newest first.
	Ascending bool
	// Unfinished keeps runs whose phase is not final.
	Unfinished bool
	// Name keeps runs of the workflow or job of this name.
	Name string
	// Projects keeps runs of these projects; empty keeps all.
	Projects []string
	// Label keeps runs its label selector selects, in kubectl's syntax
	// (see ParseSelector): "team=vision", "team in (a,b),!draft".
	Label string
	// After is a cursor: the last run of the previous page. Runs are
	// ordered newest first (unless Ascending), so the page holds runs
	// older than it.
	After *Cursor
	// Limit caps the number of runs; 0 means 100.
	Limit int
}

// Cursor marks a place in the newest-first order of runs.
type Cursor struct {
	CreatedAt time.Time
	ID        apiv1.RunID
}

// ListEventsParams selects events of one run.
type ListEventsParams struct {
	Run   apiv1.RunID
	After int64
	// Limit caps the number of events; 0 means no limit.
	Limit int
	// Tail, if not 0, keeps only the last Tail events of those after
	// After (still oldest first); Limit is then ignored.
	Tail int
}

// ListNodesParams selects a page of a run's nodes.
type ListNodesParams struct {
	Run apiv1.RunID
	// Phases keeps the nodes in one of them; empty keeps all.
	Phases []apiv1.Phase
	// Parent, if set, keeps the children of that node ("": the top).
	Parent *string
	// Since, if set, keeps the nodes changed since that node version
	// (NodePage.Version): those a write stamped with a later one.
	Since *int64
	// After is a position: the page starts after it (-1: at the first).
	After int
	// Limit caps the page; 0 means apiv1.DefaultNodePage.
	Limit int
}

// NodePage is a page of a run's nodes.
type NodePage struct {
	// Version is the run's node version, read before the nodes: every
	// write that changes what its nodes show counts it up, and stamps
	// the nodes it changed with the new value.
	Version int64
	Nodes   []apiv1.NodeStatus
	// Last is the position of the page's last node (After if none), and
	// Remaining how many nodes the query keeps after it.
	Last      int
	Remaining int
	// Counts counts by phase the nodes the Parent term keeps (every node
	// without one), whatever the other terms.
	Counts map[apiv1.Phase]int
}

// ClaimRunsParams says who claims runs, until when, and how to tell a dead owner.
type ClaimRunsParams struct {
	Owner string
	Now   time.Time
	Until time.Time
	// IDs limits the claim to these runs; empty claims any claimable run.
	IDs []apiv1.RunID
	// IsDead reports whether the engine named owner is gone for sure.
	IsDead func(owner string) bool
	// Term, when not 0, claims as the leader of this term (see
	// Leadership): runs that a leader of an earlier term holds are
	// claimable too, whatever their lease, and the claim is refused with
	// ErrFenced unless the term is still the current one.
	Term int64
}

// Tokens keeps API tokens. Only their SHA-256 hashes are stored.
type Tokens interface {
	// CreateToken saves a token; ErrConflict if its ID or hash is taken.
	CreateToken(ctx context.Context, t Token) error
	// TokenByHash returns the unrevoked token with this hash, or ErrNotFound.
	TokenByHash(ctx context.Context, hash string) (*Token, error)
	// ListTokens returns every token, revoked ones too, oldest first.
	ListTokens(ctx context.Context) ([]Token, error)
	// RevokeToken revokes the token with this ID, or returns ErrNotFound.
	RevokeToken(ctx context.Context, id string) error
}

// Secrets keeps values that task environments reference, per project.
type Secrets interface {
	// SetSecret creates or replaces a secret.
	SetSecret(ctx context.Context, project, name, value string) error
	// Secret returns a secret's value, or ErrNotFound.
	Secret(ctx context.Context, project, name string) (string, error)
	// SecretNames lists a project's secrets, never their values.
	SecretNames(ctx context.Context, project string) ([]string, error)
	// DeleteSecret removes a secret, or returns ErrNotFound.
	DeleteSecret(ctx context.Context, project, name string) error
	// Sign returns an HMAC-SHA256 of data for purpose, keyed by the key
	// that seals secret values: the same on every replica, never stored.
	Sign(purpose string, data []byte) ([]byte, error)
}

// Templates keeps WorkflowTemplates, per project: workflows that runs of
// the project may run by name as subworkflows.
type Templates interface {
	// PutTemplate creates or replaces the template of p.Project named
	// p.Template.Metadata.Name, and returns it as stored: a replaced
	// template keeps its CreatedAt, and its UpdatedAt becomes p.Now.
	PutTemplate(ctx context.Context, p PutTemplateParams) (*apiv1.WorkflowTemplate, error)
	// Template returns a template of project with its status, or ErrNotFound.
	Template(ctx context.Context, project, name string) (*apiv1.WorkflowTemplate, error)
	// ListTemplates returns a project's templates, by name.
	ListTemplates(ctx context.Context, project string) ([]*apiv1.WorkflowTemplate, error)
	// DeleteTemplate removes a template, or returns ErrNotFound.
	DeleteTemplate(ctx context.Context, project, name string) error
}

// Caches keeps the cache's index: which result is stored under which key,
// and which node is computing a key now, so that two runs that miss the
// same key compute it once. The artifacts' bytes live beside the store
// (internal/cache), content-addressed.
type Caches interface {
	// PutCacheEntry creates or replaces the entry of e.Key and drops any
	// reservation of the key, in one transaction.
	PutCacheEntry(ctx context.Context, e *apiv1.CacheEntry) error
	// CacheEntry returns the entry of key, or ErrNotFound.
	CacheEntry(ctx context.Context, key string) (*apiv1.CacheEntry, error)
	// UseCacheEntry sets the UsedAt of key's entry; ErrNotFound if none.
	UseCacheEntry(ctx context.Context, key string, at time.Time) error
	// ListCacheEntries returns the entries q selects, most recently used first.
	ListCacheEntries(ctx context.Context, q apiv1.CacheQuery) ([]*apiv1.CacheEntry, error)
	// DeleteCacheEntries removes the entries of keys, and reports how many
	// there were. Keys without an entry are ignored.
	DeleteCacheEntries(ctx context.Context, keys []string) (int, error)
	// ReserveCacheKey reserves p.Key for p.Holder until p.Until, unless
	// another holder's reservation of it is still valid (its Until is
	// after p.Now). It returns the holder of the reservation after the
	// call: p.Holder when it was granted (or already held).
	ReserveCacheKey(ctx context.Context, p ReserveCacheKeyParams) (string, error)
	// ReleaseCacheKey drops holder's reservation of key, if it holds one.
	ReleaseCacheKey(ctx context.Context, key, holder string) error
}

// ReserveCacheKeyParams reserves a cache key for the node computing it.
type ReserveCacheKeyParams struct {
	Key string
	// Holder names the node: "<run>/<node>".
	Holder string
	// Owner is the engine working the holder's run; RenewLeases extends
	// the reservations of an owner with its leases.
	Owner      string
	Now, Until time.Time
}

// PutTemplateParams is a template to store. The store keeps its
// metadata and spec; its Status is the store's to set.
type PutTemplateParams struct {
	Project  string
	Template *apiv1.WorkflowTemplate
	// Now is when it is stored.
	Now time.Time
}

// Gates keeps what users sent to waiting gates (approvals, rejections,
// signals). The run's owner reads them and decides; the store only keeps
// them, in the order they arrived. Whether the node is a gate waiting for
// such an input is the engine's to check before it adds one.
type Gates interface {
	// AddGateInput records in for node of run id. ErrNotFound for an
	// unknown run or node, *PhaseError (ErrPhase) for a run that has ended.
	AddGateInput(ctx context.Context, id apiv1.RunID, node string, in apiv1.GateInput) error
	// GateInputs returns the run's inputs, oldest first, with their node.
	// RetryRun drops the inputs of the nodes it makes Pending again.
	GateInputs(ctx context.Context, id apiv1.RunID) ([]GateInputRow, error)
}

// GateInputRow is one input sent to one node's gate.
type GateInputRow struct {
	Node string
	apiv1.GateInput
}

// Token is an API token as stored: its hash, never its value.
type Token struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Hash      string    `json:"-"`
	Role      string    `json:"role"`
	Projects  []string  `json:"projects"`
	CreatedAt time.Time `json:"createdAt"`
	Revoked   bool      `json:"revoked,omitempty"`
}

// Request is what other processes asked of a run: to cancel it or stop
// it, and whether it should be suspended.
type Request struct {
	Run     apiv1.RunID
	Cancel  bool
	Stop    bool
	Suspend bool
}

// RenewLeasesParams extends an owner's leases.
type RenewLeasesParams struct {
	Owner string
	Until time.Time
}

// Change is what one reconcile round of a run changed. Nodes and attempts
// are written whole (upserted by key); events are appended.
type Change struct {
	Run   apiv1.RunID
	Owner string
	// Term, when not 0, is the leadership term the owner writes under
	// (see Leadership): the change is refused with ErrFenced unless it is
	// still the current term. Its events are recorded with it.
	Term int64
	// Status, when not nil, replaces the run's phase, code, message, times,
	// outputs and progress.
	Status *apiv1.RunStatus
	// Nodes replace the named nodes' rows, attempts excluded. A node's
	// Expansion and TrainerStatus are written only when set.
	Nodes []apiv1.NodeStatus
	// Added are nodes made while the run goes on (children), saved after
	// the run's last node, in order.
	Added []apiv1.NodeStatus
	// Attempts are upserted by (node, number).
	Attempts []AttemptRow
	// Events are appended in order; their Seq is assigned by the store.
	Events []apiv1.Event
}

// AttemptRow is one attempt of one node.
type AttemptRow struct {
	Node string
	apiv1.AttemptStatus
}

// Empty reports whether c writes nothing.
func (c *Change) Empty() bool {
	return c.Status == nil && len(c.Nodes) == 0 && len(c.Added) == 0 && len(c.Attempts) == 0 && len(c.Events) == 0
}

// Federation keeps what a federated run and a party's part of one need
// beyond a run: the initiator's orders for a part's shares.
type Federation interface {
	// PutShareOrder saves o as the latest order for node of part id,
	// replacing the node's last one. ErrNotFound for an unknown run or
	// node; a *PhaseError for a run that ended.
	PutShareOrder(ctx context.Context, id apiv1.RunID, node string, o ShareOrderRow) error
	// ShareOrders returns the part's latest orders, by node.
	ShareOrders(ctx context.Context, id apiv1.RunID) (map[string]ShareOrderRow, error)
	// HeardFromInitiator records that part id's initiator called at at
	// (a later time replaces an earlier one, never the reverse).
	HeardFromInitiator(ctx context.Context, id apiv1.RunID, at time.Time) error
	// SilentParts returns the parts that have not ended and whose
	// initiator was last heard from before before, with when.
	SilentParts(ctx context.Context, before time.Time) (map[apiv1.RunID]time.Time, error)
}

// ShareOrderRow is the latest order for one share, and where the party
// said the share's attempt would meet its peers.
type ShareOrderRow struct {
	apiv1.ShareOrder
	Address string
	At      time.Time
	// Code, set only on the party's own orders (never the initiator's),
	// is the code the share ends with: its idle timeout's.
	Code apiv1.Code
	// Inputs are the other parties' output parameters the share reads,
	// by TASK.PARAM, fetched by this party when the start was ordered.
	Inputs map[string]string
}
