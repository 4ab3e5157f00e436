package app

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/controller"
	"kiln.dev/kiln/internal/federation"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/training"
	"kiln.dev/kiln/internal/who"
	"kiln.dev/kiln/internal/workflow"
)

// The App is the engine embedded in this process. Its methods are the
// same, with the same meaning and errors, as the HTTP API's and the Go
// client's (client.Client), so the CLI drives both through one interface.

// Submit checks a submission and starts a run of it on this engine.
// Nothing is saved when it fails. Tasks start in the directory of the
// workflow's file when s.WorkDir names a directory this machine has;
// otherwise in their attempt's own directory. A subworkflow that no
// Workflow of the files is named after is the WorkflowTemplate of that
// name stored in the run's project (kiln apply); the run keeps a copy.
func (a *App) Submit(ctx context.Context, s apiv1.Submission) (*apiv1.Run, error) {
	run, _, err := a.SubmitOnce(ctx, s)
	return run, err
}

// SubmitOnce is Submit, except that a submission whose idempotency key
// created a run of its project within apiv1.IdempotencyWindow creates
// none: it answers that run, and replayed. The key sent with another
// submission is KLN-4061.
func (a *App) SubmitOnce(ctx context.Context, s apiv1.Submission) (run *apiv1.Run, replayed bool, err error) {
	if s.Project, err = a.submissionProject(ctx, s); err != nil {
		return nil, false, err
	}
	// The digest is of the submission as it is stored, with its project
	// resolved, as submit records the key's.
	key := keyOf(s.IdempotencyKey, s.Digest())
	return a.once(ctx, s.Project, key, func() (*apiv1.Run, error) {
		return a.submit(ctx, s, "")
	})
}

// submissionProject is the project s goes to: s.Project, or, when it
// names none, the metadata.namespace of its documents if kiln has that
// project (KLN-1089 when a namespace cannot be the project). Files that
// do not read are left to the checks of submit, which report them.
func (a *App) submissionProject(ctx context.Context, s apiv1.Submission) (string, error) {
	if !slices.ContainsFunc(s.Files, func(f apiv1.SourceFile) bool { return bytes.Contains(f.Data, []byte("namespace")) }) {
		return a.projectFor(ctx, s.Project, nil) // most files name none: not read twice
	}
	_, docs, _ := workflow.ReadSources(s.Files)
	return a.projectFor(ctx, s.Project, docs)
}

// once creates a run with create, unless key (nil: none) created a run
// of project within apiv1.IdempotencyWindow: then it answers that run,
// and replayed; the key sent with another request is KLN-4061.
func (a *App) once(ctx context.Context, project string, key *store.NewSubmitKey, create func() (*apiv1.Run, error)) (*apiv1.Run, bool, error) {
	first := func() (*apiv1.Run, error) {
		if key == nil {
			return nil, nil
		}
		return store.FirstRun(ctx, a.Store, project, key.Key, key.Digest, key.Since)
	}
	if run, err := first(); run != nil || err != nil {
		return run, run != nil, err
	}
	run, err := create()
	if errors.Is(err, store.ErrKeyTaken) { // a request with the key at once won
		if won, ferr := first(); won != nil || ferr != nil {
			return won, won != nil, ferr
		}
	}
	return run, false, err
}

// submit is Submit with the run's ID chosen (id empty: a new one).
func (a *App) submit(ctx context.Context, s apiv1.Submission, id apiv1.RunID) (*apiv1.Run, error) {
	if err := checkCacheMode(s.Cache); err != nil {
		return nil, err
	}
	l, err := workflow.LoadSubmissionWith(&s, a.storedTemplates(ctx, projectOf(s.Project)), a.storedRuntimes(ctx, projectOf(s.Project)))
	if err != nil {
		return nil, err
	}
	require := workflow.RequireCommands // processes on hosts run commands
	if backend.Has[backend.Images](a.Backend) {
		require = workflow.RequireImages
	}
	if err := require(l.Doc, l.Plan); err != nil {
		return nil, err
	}
	fed, err := a.checkFederated(ctx, l.Plan.Workflow, l.Params)
	if err != nil {
		return nil, err
	}
	src, dir := placeSource(l.Doc.File, s.WorkDir)
	run, err := a.Controller.Runs().Submit(ctx, controller.SubmitParams{
		Plan: l.Plan, Params: l.Params, Source: src, WorkDir: dir, Suspend: l.Plan.Suspend, Project: s.Project,
		Cache: s.Cache, Warnings: a.warnings(l), Federation: fed, ID: id,
		Key: keyOf(s.IdempotencyKey, s.Digest()), Commit: s.Commit,
	})
	if err == nil && fed != nil {
		a.watchFederated(run.ID, fed.Roles)
	}
	return run, err
}

// keyOf is the key a run is stored with for a request with key and
// digest, nil without a key: it holds for apiv1.IdempotencyWindow.
func keyOf(key, digest string) *store.NewSubmitKey {
	if key == "" {
		return nil
	}
	return &store.NewSubmitKey{Key: key, Digest: digest, Since: time.Now().Add(-apiv1.IdempotencyWindow)}
}

// warnings say what of a translated document (Kubeflow Trainer's,
// training-operator's) this server's backend ignores.
func (a *App) warnings(l *workflow.Loaded) []string {
	var out []string
	for _, i := range workflow.IgnoredOn(backend.NameOf(a.Backend), l.Ignored) {
		out = append(out, i.Message())
	}
	return out
}

// placeSource resolves a submitted file's name against the submitter's
// working directory, if this machine has that directory, and returns the
// name to record and the directory tasks start in ("" when unknown).
func placeSource(file, workDir string) (src, dir string) {
	if !filepath.IsAbs(workDir) {
		return file, ""
	}
	if fi, err := os.Stat(workDir); err != nil || !fi.IsDir() {
		return file, ""
	}
	if file == "" || file == "-" {
		return file, workDir
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(workDir, file)
	}
	return file, filepath.Dir(file)
}

// GetRun returns a run with its nodes and attempts; KLN-4001 if there is none.
func (a *App) GetRun(ctx context.Context, id apiv1.RunID) (*apiv1.Run, error) {
	run, err := a.Store.GetRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, a.partHint(ctx, noRun(id), id)
	}
	return run, err
}

// partHint points a user who names, at a party, the federated run
// another party initiated to this party's part of it.
func (a *App) partHint(ctx context.Context, e *apiv1.Error, id apiv1.RunID) *apiv1.Error {
	if a.Party == "" {
		return e
	}
	part := apiv1.PartID(id, a.Party)
	if _, err := a.Store.GetRun(ctx, part); err == nil {
		e.Message += fmt.Sprintf(" here: run %s is federated, and this server, party %s, holds its part %s", id, a.Party, part)
		e.Hint = "use " + string(part) + " here (kiln describe run " + string(part) + "), or ask the run's initiator about the whole run"
	}
	return e
}

func noRun(id apiv1.RunID) *apiv1.Error {
	return &apiv1.Error{Code: apiv1.CodeRunNotFound, Object: "Run/" + string(id), Message: "no such run"}
}

// ListRuns returns a page of runs, newest first.
func (a *App) ListRuns(ctx context.Context, q apiv1.RunQuery) (*apiv1.RunList, error) {
	p, err := ListParams(q)
	if err != nil {
		return nil, err
	}
	runs, err := a.Store.ListRuns(ctx, p)
	if err != nil {
		return nil, err
	}
	return Page(runs, p.Limit), nil
}

// ListParams turns a query into the store's parameters, checking it.
func ListParams(q apiv1.RunQuery) (store.ListRunsParams, error) {
	p := store.ListRunsParams{
		Phase: q.Phase, Phases: q.Phases, Name: q.Name, Label: q.Label, Limit: q.Limit,
		Since: q.Since, Until: q.Until, Search: q.Search, Ascending: q.Ascending,
	}
	if q.Project != "" {
		p.Projects = []string{q.Project}
	}
	if _, err := store.ParseSelector(q.Label); err != nil {
		return p, err
	}
	if p.Limit == 0 {
		p.Limit = 50
	}
	if p.Limit < 1 || p.Limit > maxPage {
		return p, &apiv1.Error{Code: apiv1.CodeBadRequest, Field: "limit", Message: fmt.Sprintf("limit %d is not from 1 to %d", q.Limit, maxPage)}
	}
	if q.Cursor != "" {
		c, err := store.ParseCursor(q.Cursor)
		if err != nil {
			return p, &apiv1.Error{Code: apiv1.CodeBadRequest, Field: "cursor", Message: fmt.Sprintf("cursor %q is not one kiln gave", q.Cursor)}
		}
		p.After = c
	}
	return p, nil
}

// maxPage bounds a page of runs.
const maxPage = 500

// Page makes a page of runs that a query with limit returned.
func Page(runs []*apiv1.Run, limit int) *apiv1.RunList {
	page := &apiv1.RunList{Items: runs}
	if page.Items == nil {
		page.Items = []*apiv1.Run{}
	}
	if len(runs) == limit && limit > 0 {
		last := runs[len(runs)-1]
		page.Next = store.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}.String()
	}
	return page
}

// Events returns a run's events after sequence number after.
func (a *App) Events(ctx context.Context, id apiv1.RunID, after int64) ([]apiv1.Event, error) {
	if _, err := a.GetRun(ctx, id); err != nil {
		return nil, err
	}
	return a.Store.ListEvents(ctx, store.ListEventsParams{Run: id, After: after})
}

// GetRunHead returns a run without its nodes.
func (a *App) GetRunHead(ctx context.Context, id apiv1.RunID) (*apiv1.Run, error) {
	run, err := a.Store.GetRunHead(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, a.partHint(ctx, noRun(id), id)
	}
	return run, err
}

// RunNodes returns a page of a run's nodes as q selects them (see
// store.NodeList).
func (a *App) RunNodes(ctx context.Context, id apiv1.RunID, q apiv1.NodeQuery) (*apiv1.NodeList, error) {
	list, err := store.NodeList(ctx, a.Store, id, q)
	if errors.Is(err, store.ErrNotFound) {
		return nil, a.partHint(ctx, noRun(id), id)
	}
	return list, err
}

// EventPage returns a run's events as q selects them (see
// store.EventPage): all, the last q.Tail or a page of q.Limit.
// A run has its Submitted event from the start, so one with no event at
// all is one that does not exist, which GetRun then says as it says it.
func (a *App) EventPage(ctx context.Context, id apiv1.RunID, q apiv1.EventQuery) (*apiv1.EventList, error) {
	if n, err := a.Store.CountEvents(ctx, id, 0); err != nil || n == 0 {
		if _, err := a.GetRun(ctx, id); err != nil {
			return nil, err
		}
	}
	return store.EventPage(ctx, a.Store, id, q)
}

// Messages returns the federation channel's log of part id. A run that
// is no party's part has none: KLN-4006, pointing at its parts.
func (a *App) Messages(ctx context.Context, id apiv1.RunID) ([]apiv1.ChannelMessage, error) {
	run, err := a.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := federation.NoChannelLog(run, a.Party); err != nil {
		return nil, err
	}
	return a.Store.ChannelLog(ctx, id)
}

// Cancel asks for run id to be cancelled. If no live engine works the
// run, this one takes it over, stops it, and returns once it has ended.
// A run that ended is KLN-4010.
func (a *App) Cancel(ctx context.Context, id apiv1.RunID) error {
	return a.askAndAdopt(who.Or(ctx, localUser()), id, a.Controller.Runs().Cancel)
}

// Stop asks for run id to be stopped, its exit handlers run. If no live
// engine works the run, this one takes it over, stops it, and returns
// once it has ended. A run that ended is KLN-4010.
func (a *App) Stop(ctx context.Context, id apiv1.RunID) error {
	return a.askAndAdopt(who.Or(ctx, localUser()), id, a.Controller.Runs().Stop)
}

// askAndAdopt records a request about run id with ask; if no live engine
// works the run, this one takes it over, asks again, and waits until the
// run has ended.
func (a *App) askAndAdopt(ctx context.Context, id apiv1.RunID, ask func(context.Context, apiv1.RunID) error) error {
	if err := ask(ctx, id); err != nil {
		return err
	}
	if a.Controller.Runs().Owns(id) {
		return nil // this engine works it, and acts on the request
	}
	claimed, err := a.Claim(ctx, id)
	if err != nil || len(claimed) == 0 {
		return err
	}
	if err := ask(ctx, id); err != nil {
		return err
	}
	select {
	case <-a.Controller.Runs().Done(id):
	case <-ctx.Done():
	}
	return nil
}

// Suspend asks for run id's training jobs to be suspended (or started
// again). The engine working the run acts on it within a second.
func (a *App) Suspend(ctx context.Context, id apiv1.RunID, suspend bool) error {
	return a.Controller.Runs().Suspend(who.Or(ctx, localUser()), id, suspend)
}

// Retry runs a Failed or Cancelled run again from where it stopped, on
// this engine, as req says (controller.Controller.Retry).
func (a *App) Retry(ctx context.Context, id apiv1.RunID, req apiv1.RetryRequest) error {
	run, err := a.Store.GetRun(ctx, id)
	if err == nil && run.Federation != nil && run.Federation.Part {
		return notAPart(run)
	}
	if err == nil && run.Federation != nil {
		return &apiv1.Error{
			Code: apiv1.CodeRunPhase, Object: "Run/" + string(id),
			Message: "a federated run is not retried in place: its parts at the other parties have ended",
			Hint:    "rerun it from the task that failed, at its initiator: kiln rerun " + string(run.Federation.Run) + " --from TASK",
		}
	}
	return a.Controller.Runs().Retry(who.Or(ctx, localUser()), id, req)
}

// SendGateInput sends an approval, a rejection (in.Approve) or a signal
// (in.Value) to gate task node of run id, and wakes the run if this
// engine works it; otherwise the engine that works it reads the input
// from the store. in.By defaults to the user running this process. Its
// errors are coded: KLN-4001, KLN-4010, KLN-4014 and KLN-1023 (see
// controller.SendGateInput).
func (a *App) SendGateInput(ctx context.Context, id apiv1.RunID, node string, in apiv1.GateInput) error {
	if in.By == "" {
		in.By = localUser()
	}
	return a.Controller.Runs().SendGateInput(ctx, id, node, in)
}

// localUser names who runs this process: the account's name, else
// $USER, else "local".
func localUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return cmp.Or(os.Getenv("USER"), "local")
}

// Runtimes lists the built-in training runtimes.
func (a *App) Runtimes(context.Context) ([]apiv1.TrainingRuntime, error) {
	return training.Builtin(), nil
}

// SetSecret creates or replaces a secret of project. Its name is a
// DNS-1123 subdomain, as a Kubernetes Secret's.
func (a *App) SetSecret(ctx context.Context, project, name, value string) error {
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return &apiv1.Error{
			Code: apiv1.CodeInvalidName, Object: "Secret/" + name, Field: "name",
			Message: fmt.Sprintf("%q is not a secret name", name),
			Hint:    "use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit",
		}
	}
	return a.Store.SetSecret(ctx, project, name, value)
}

// SecretNames lists a project's secrets, never their values.
func (a *App) SecretNames(ctx context.Context, project string) ([]string, error) {
	return a.Store.SecretNames(ctx, project)
}

// DeleteSecret removes a secret of project; KLN-4011 if there is none.
func (a *App) DeleteSecret(ctx context.Context, project, name string) error {
	err := a.Store.DeleteSecret(ctx, project, name)
	if errors.Is(err, store.ErrNotFound) {
		return noSecret(project, name)
	}
	return err
}

func noSecret(project, name string) error {
	return &apiv1.Error{Code: apiv1.CodeSecretNotFound, Object: "Secret/" + name, Message: fmt.Sprintf("project %q has no secret %q", project, name)}
}

// Changes returns a channel that receives a value after each round this
// engine saves, and a function to stop receiving.
func (a *App) Changes() (<-chan struct{}, func()) { return a.Controller.Runs().Changes() }

// Done returns a channel closed once this engine no longer works run id:
// it ended, or another engine took it over.
func (a *App) Done(id apiv1.RunID) <-chan struct{} { return a.Controller.Runs().Done(id) }

// checkCacheMode refuses a submission's unknown cache mode.
func checkCacheMode(m apiv1.CacheMode) error {
	if m == "" || slices.Contains(apiv1.CacheModes(), m) {
		return nil
	}
	return &apiv1.Error{
		Code: apiv1.CodeInvalidValue, Field: "cache",
		Message: fmt.Sprintf("%q is not a cache mode", m), Hint: "use on, off or overwrite",
	}
}
