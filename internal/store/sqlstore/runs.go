package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// CreateRun implements store.Runs. The run is committed with the other
// writes waiting (see grouped).
func (s *Store) CreateRun(ctx context.Context, p store.CreateRunParams) (err error) {
	defer s.coded(&err)
	return s.grouped(ctx, func(ctx context.Context, tx *sql.Tx) error { return s.createRun(ctx, tx, &p) })
}

// createRun writes p's run in tx: its row, which holds its life and first
// progress, its labels, spec and federation, its nodes in multi-row
// statements, a rerun's preset nodes and its first events. The
// statements a plain run needs are prepared once, with the store.
func (s *Store) createRun(ctx context.Context, tx *sql.Tx, p *store.CreateRunParams) error {
	r := &p.Run
	project := r.Project
	if project == "" {
		project = "default"
	}
	phase := r.Status.Phase
	if phase == "" {
		phase = apiv1.PhasePending
	}
	if err := fenceTerm(ctx, tx, p.Term); err != nil {
		return err
	}
	if err := s.putSubmitKey(ctx, tx, project, r, p.Key); err != nil {
		return err
	}
	ttl, succeeded, failed := lifeOf(r)
	_, err := tx.StmtContext(ctx, s.stmts.insertRun).ExecContext(ctx,
		r.ID, r.Name, r.Kind, mustJSON(r.Labels), mustJSON(r.Params), r.Source, r.WorkDir,
		r.CreatedAt.UnixNano(), phase, p.Owner, p.LeaseUntil.UnixNano(), r.Suspend, project, phase.Done(), r.Cache, p.Term,
		ttl, succeeded, failed, mustJSON(firstProgress(p)))
	if err != nil {
		if s.dialect.IsConflict(err) {
			return fmt.Errorf("run %s: %w", r.ID, store.ErrConflict)
		}
		return err
	}
	if err := putLabels(ctx, tx, r); err != nil {
		return err
	}
	if _, err := tx.StmtContext(ctx, s.stmts.insertSpec).ExecContext(ctx, r.ID,
		mustJSON(r.Workflow), jsonOrEmpty(len(r.Subworkflows), r.Subworkflows)); err != nil {
		return err
	}
	if err := putFederation(ctx, tx, r); err != nil {
		return err
	}
	if err := s.insertFirstNodes(ctx, tx, p); err != nil {
		return err
	}
	if err := s.createPreset(ctx, tx, p); err != nil {
		return err
	}
	events := []apiv1.Event{{
		Phase: apiv1.PhasePending, Reason: "Submitted",
		Message: fmt.Sprintf("%s %s submitted with %d %s", r.Kind, r.Name, len(p.Nodes), tasksWord(len(p.Nodes))), Time: r.CreatedAt,
	}}
	events = append(events, p.Events...)
	return s.insertEvents(ctx, tx, r.ID, append(events, presetEvents(p)...))
}

// insertFirstNodes writes a new run's nodes, each Pending, in multi-row
// statements.
func (s *Store) insertFirstNodes(ctx context.Context, tx *sql.Tx, p *store.CreateRunParams) error {
	args := make([]any, 0, len(p.Nodes)*nodeRows.cols)
	for i, name := range p.Nodes {
		var kind apiv1.NodeKind
		if i < len(p.Kinds) {
			kind = p.Kinds[i]
		}
		args = append(args, p.Run.ID, i, name, apiv1.PhasePending, kind, "", "", "",
			nil, nil, nil, "", "", "", "", "", "", 0)
	}
	return s.execRows(ctx, tx, nodeRows, args)
}

const runColumns = `id, name, kind, labels, params, source, work_dir, created_at, phase, code, message, started_at, finished_at, suspend, project, outputs, cache_mode, progress, suspension`

func scanRun(row interface{ Scan(...any) error }) (*apiv1.Run, error) {
	var r apiv1.Run
	var labels, params, outputs, progress, suspension string
	var created int64
	var started, finished sql.NullInt64
	err := row.Scan(&r.ID, &r.Name, &r.Kind, &labels, &params, &r.Source, &r.WorkDir, &created,
		&r.Status.Phase, &r.Status.Code, &r.Status.Message, &started, &finished, &r.Suspend, &r.Project, &outputs, &r.Cache, &progress, &suspension)
	if err != nil {
		return nil, err
	}
	r.CreatedAt = *timeOf(sql.NullInt64{Int64: created, Valid: true})
	r.Status.StartedAt, r.Status.FinishedAt = timeOf(started), timeOf(finished)
	err = errors.Join(json.Unmarshal([]byte(labels), &r.Labels), json.Unmarshal([]byte(params), &r.Params),
		unmarshalIf(outputs, &r.Status.Outputs), unmarshalIf(progress, &r.Status.Progress), unmarshalIf(suspension, &r.Status.Suspended))
	return &r, err
}

// GetRun implements store.Runs.
func (s *Store) GetRun(ctx context.Context, id apiv1.RunID) (_ *apiv1.Run, err error) {
	defer s.coded(&err)
	r, err := s.runHead(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.Status.Nodes, err = s.nodes(ctx, id); err != nil {
		return nil, err
	}
	if err := errors.Join(s.attempts(ctx, r), s.reused(ctx, r), s.partyShares(ctx, r), s.nodeArtifacts(ctx, r), s.nodeInputs(ctx, r)); err != nil {
		return nil, err
	}
	return r, s.trainerStatuses(ctx, r)
}

// GetRunHead implements store.Runs.
func (s *Store) GetRunHead(ctx context.Context, id apiv1.RunID) (_ *apiv1.Run, err error) {
	defer s.coded(&err)
	return s.runHead(ctx, id)
}

// runHead reads run id without its nodes.
func (s *Store) runHead(ctx context.Context, id apiv1.RunID) (*apiv1.Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	var wf, subs, rerunOf string
	if err := s.db.QueryRowContext(ctx, `SELECT workflow, subworkflows, rerun_of FROM run_specs WHERE run_id = ?`, id).Scan(&wf, &subs, &rerunOf); err != nil {
		return nil, fmt.Errorf("reading the spec of run %s: %w", id, err)
	}
	if err := errors.Join(json.Unmarshal([]byte(wf), &r.Workflow), unmarshalIf(subs, &r.Subworkflows), unmarshalIf(rerunOf, &r.RerunOf)); err != nil {
		return nil, err
	}
	return r, s.federation(ctx, r)
}

func (s *Store) nodes(ctx context.Context, id apiv1.RunID) ([]apiv1.NodeStatus, error) {
	nodes, _, err := s.queryNodes(ctx, `nodes.run_id = ? ORDER BY nodes.position`, id)
	return nodes, err
}

// queryNodes reads the nodes that where (a WHERE clause on table nodes,
// with its ORDER BY and LIMIT) selects, and their positions.
func (s *Store) queryNodes(ctx context.Context, where string, args ...any) ([]apiv1.NodeStatus, []int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, phase, code, message, started_at, finished_at, retry_at, outputs,
		conditions, replicas, attempt_base, kind, parent, children, COALESCE(e.expansion, ''), gate, cache, position
		FROM nodes LEFT JOIN node_expansions e ON e.run_id = nodes.run_id AND e.node = nodes.name
		WHERE `+where, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var nodes []apiv1.NodeStatus
	var positions []int
	for rows.Next() {
		var n apiv1.NodeStatus
		var pos int
		var started, finished, retry sql.NullInt64
		var outputs, conditions, replicas, children, expansion, gate, cache string
		if err := rows.Scan(&n.Name, &n.Phase, &n.Code, &n.Message, &started, &finished, &retry, &outputs,
			&conditions, &replicas, &n.AttemptBase, &n.Kind, &n.Parent, &children, &expansion, &gate, &cache, &pos); err != nil {
			return nil, nil, err
		}
		n.StartedAt, n.FinishedAt, n.RetryAt = timeOf(started), timeOf(finished), timeOf(retry)
		if expansion != "" {
			n.Expansion = json.RawMessage(expansion)
		}
		if err := errors.Join(unmarshalIf(outputs, &n.Outputs), unmarshalIf(conditions, &n.Conditions),
			unmarshalIf(replicas, &n.Replicas), unmarshalIf(children, &n.Children), unmarshalIf(gate, &n.Gate),
			unmarshalIf(cache, &n.Cache)); err != nil {
			return nil, nil, err
		}
		nodes = append(nodes, n)
		positions = append(positions, pos)
	}
	return nodes, positions, rows.Err()
}

func (s *Store) attempts(ctx context.Context, r *apiv1.Run) error {
	return s.attemptsWhere(ctx, r, `run_id = ?`, r.ID)
}

// attemptsOf reads the attempts of r's nodes alone, for a page of them.
func (s *Store) attemptsOf(ctx context.Context, r *apiv1.Run) error {
	if len(r.Status.Nodes) > maxVars {
		return s.attempts(ctx, r)
	}
	where, args := ofNodes(r)
	return s.attemptsWhere(ctx, r, where, args...)
}

// ofNodes is the WHERE clause, with its arguments, that keeps the rows of
// r's nodes, on a table keyed by run_id and node.
func ofNodes(r *apiv1.Run) (string, []any) {
	args := []any{r.ID}
	for _, n := range r.Status.Nodes {
		args = append(args, n.Name)
	}
	return `run_id = ? AND node IN (` + strings.TrimSuffix(strings.Repeat("?,", len(r.Status.Nodes)), ",") + `)`, args
}

// attemptsWhere adds to r's nodes the attempts where selects.
func (s *Store) attemptsWhere(ctx context.Context, r *apiv1.Run, where string, args ...any) error {
	index := make(map[string]int, len(r.Status.Nodes))
	for i, n := range r.Status.Nodes {
		index[n.Name] = i
	}
	rows, err := s.db.QueryContext(ctx, `SELECT node, number, id, phase, exit_code, signal, code, message, system, started_at, finished_at,
		nodes, joined, dropped, logs_lost FROM attempts WHERE `+where+` ORDER BY node, number`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var node string
		var a apiv1.AttemptStatus
		var exit, started, finished sql.NullInt64
		var dropped, logsLost string
		if err := rows.Scan(&node, &a.Number, &a.ID, &a.Phase, &exit, &a.Signal, &a.Code, &a.Message, &a.System, &started, &finished,
			&a.Nodes, &a.Joined, &dropped, &logsLost); err != nil {
			return err
		}
		if err := unmarshalIf(dropped, &a.Dropped); err != nil {
			return fmt.Errorf("attempt %s: dropped: %w", a.ID, err)
		}
		if err := unmarshalIf(logsLost, &a.LogsLost); err != nil {
			return fmt.Errorf("attempt %s: logs lost: %w", a.ID, err)
		}
		a.ExitCode, a.StartedAt, a.FinishedAt = intOf(exit), timeOf(started), timeOf(finished)
		if i, ok := index[node]; ok {
			r.Status.Nodes[i].Attempts = append(r.Status.Nodes[i].Attempts, a)
		}
	}
	return rows.Err()
}

// ListRuns implements store.Runs. Filters and the cursor are index
// lookups, so a page costs the same with a hundred thousand runs.
func (s *Store) ListRuns(ctx context.Context, p store.ListRunsParams) (_ []*apiv1.Run, err error) {
	defer s.coded(&err)
	query, args, err := s.listQuery(p)
	if err != nil {
		return nil, err
	}
	rows, err := s.queryRead(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []*apiv1.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return runs, s.federations(ctx, runs)
}

func toAny[S ~string](ss []S) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// ListEvents implements store.Runs.
func (s *Store) ListEvents(ctx context.Context, p store.ListEventsParams) (_ []apiv1.Event, err error) {
	defer s.coded(&err)
	limit := p.Limit
	if limit <= 0 {
		limit = math.MaxInt32 // every event: a limit both databases take
	}
	order := "ORDER BY seq"
	if p.Tail > 0 {
		limit, order = p.Tail, "ORDER BY seq DESC"
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, run_id, node, attempt, phase, reason, code, message, time
		FROM events WHERE run_id = ? AND seq > ? `+order+` LIMIT ?`, p.Run, p.After, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var events []apiv1.Event
	for rows.Next() {
		var e apiv1.Event
		var at int64
		if err := rows.Scan(&e.Seq, &e.Run, &e.Node, &e.Attempt, &e.Phase, &e.Reason, &e.Code, &e.Message, &at); err != nil {
			return nil, err
		}
		e.Time = *timeOf(sql.NullInt64{Int64: at, Valid: true})
		events = append(events, e)
	}
	if p.Tail > 0 {
		slices.Reverse(events)
	}
	return events, rows.Err()
}

// CountEvents implements store.Runs.
func (s *Store) CountEvents(ctx context.Context, run apiv1.RunID, after int64) (_ int, err error) {
	defer s.coded(&err)
	var n int
	err = s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM events WHERE run_id = ? AND seq > ?`, run, after).Scan(&n)
	return n, err
}

// CountRuns implements store.Runs. It reads run_counts, which triggers
// keep in the transaction of every write that adds, removes or moves a
// run (migrations: run_counts), so that a count costs the same at any
// number of runs and is what a count of the runs would say.
func (s *Store) CountRuns(ctx context.Context) (_ map[apiv1.Phase]int, err error) {
	defer s.coded(&err)
	rows, err := s.queryRead(ctx, `SELECT phase, n FROM run_counts WHERE n <> 0`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[apiv1.Phase]int{}
	for rows.Next() {
		var phase apiv1.Phase
		var n int
		if err := rows.Scan(&phase, &n); err != nil {
			return nil, err
		}
		out[phase] = n
	}
	return out, rows.Err()
}

// RequestSuspend implements store.Runs.
func (s *Store) RequestSuspend(ctx context.Context, id apiv1.RunID, suspend bool, by string) (err error) {
	defer s.coded(&err)
	what := map[bool]string{true: "suspend", false: "unsuspend"}[suspend]
	reason := map[bool]string{true: "SuspendRequested", false: "UnsuspendRequested"}[suspend]
	flag := 0
	if suspend {
		flag = 1
	}
	return s.request(ctx, id, requested(reason, what, by), `UPDATE runs SET suspend = ? WHERE id = ? AND done = 0 AND suspend <> ?`, flag, id, flag)
}

// RequestCancel implements store.Runs.
func (s *Store) RequestCancel(ctx context.Context, id apiv1.RunID, by string) (err error) {
	defer s.coded(&err)
	return s.request(ctx, id, requested("CancelRequested", "cancel", by), `UPDATE runs SET cancel_requested = 1 WHERE id = ? AND done = 0 AND cancel_requested <> 1`, id)
}

// RequestStop implements store.Runs. cancel_requested is 1 for a cancel,
// 2 for a stop; a cancel asked before stays.
func (s *Store) RequestStop(ctx context.Context, id apiv1.RunID, by string) (err error) {
	defer s.coded(&err)
	return s.request(ctx, id, requested("StopRequested", "stop", by),
		`UPDATE runs SET cancel_requested = 2 WHERE id = ? AND done = 0 AND cancel_requested = 0`, id)
}

// requested is the event that records a request of what, asked by by.
func requested(reason, what, by string) apiv1.Event {
	msg := what + " requested"
	if by != "" {
		msg += " by " + by
	}
	return apiv1.Event{Reason: reason, Message: msg, Time: time.Now().UTC()}
}

// request runs an update of an unfinished run that changes it only if it
// was not asked already, and records ev, with the run's phase, in one
// transaction. When the update changes nothing, it tells an unknown run
// (ErrNotFound) and a finished one (ErrPhase) from one that was asked
// already: that one is left as it is, with no second event.
func (s *Store) request(ctx context.Context, id apiv1.RunID, ev apiv1.Event, query string, args ...any) error {
	return s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		var done bool
		err = tx.QueryRowContext(ctx, `SELECT phase, done FROM runs WHERE id = ?`, id).Scan(&ev.Phase, &done)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("run %s: %w", id, store.ErrNotFound)
		case err != nil:
			return err
		case done:
			return &store.PhaseError{Run: id, Phase: ev.Phase}
		case n == 0:
			return nil // asked already
		}
		return s.insertEvents(ctx, tx, id, []apiv1.Event{ev})
	})
}

func (s *Store) insertEvents(ctx context.Context, tx *sql.Tx, run apiv1.RunID, events []apiv1.Event) error {
	return s.insertEventsAt(ctx, tx, run, events, 0)
}

// insertEventsAt appends events written under leadership term term.
func (s *Store) insertEventsAt(ctx context.Context, tx *sql.Tx, run apiv1.RunID, events []apiv1.Event, term int64) error {
	args := make([]any, 0, len(events)*eventRows.cols)
	for _, e := range events {
		args = append(args, run, e.Node, e.Attempt, e.Phase, e.Reason, e.Code, e.Message, e.Time.UnixNano(), term)
	}
	return s.execRows(ctx, tx, eventRows, args)
}

// unmarshalIf decodes s into v unless s is empty.
func unmarshalIf(s string, v any) error {
	if s == "" {
		return nil
	}
	return json.Unmarshal([]byte(s), v)
}

func tasksWord(n int) string {
	if n == 1 {
		return "task"
	}
	return "tasks"
}
