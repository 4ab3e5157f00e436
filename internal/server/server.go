// Package server is kiln's HTTP API: /api/v1 over the store and an
// engine, behind bearer-token auth, plus health endpoints. Errors are JSON
// with the same KLN codes the CLI prints.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/web"
)

// Engine is what the server asks of the engine running beside it; the
// embedded engine (internal/app) is one. Errors are coded *apiv1.Error
// values, which the server answers with their HTTP status.
type Engine interface {
	runner
	// Logs writes what a task's processes wrote (see apiv1.LogQuery).
	Logs(ctx context.Context, q apiv1.LogQuery, w io.Writer) error
	// Runtimes lists the built-in training runtimes.
	Runtimes(ctx context.Context) ([]apiv1.TrainingRuntime, error)
}

// runner starts and steers runs.
type runner interface {
	Submit(ctx context.Context, s apiv1.Submission) (*apiv1.Run, error)
	Cancel(ctx context.Context, id apiv1.RunID) error
	// Stop ends a run that has not ended: its running tasks are stopped,
	// nothing else starts, its exit handlers run (argo stop).
	Stop(ctx context.Context, id apiv1.RunID) error
	Suspend(ctx context.Context, id apiv1.RunID, suspend bool) error
	// Retry runs a Failed or Cancelled run again, as req says.
	Retry(ctx context.Context, id apiv1.RunID, req apiv1.RetryRequest) error
	// Rerun starts a new run of run id's stored spec, from, only or
	// until one of its tasks (see apiv1.RerunRequest), and returns it.
	Rerun(ctx context.Context, id apiv1.RunID, req apiv1.RerunRequest) (*apiv1.Run, error)
	// DeleteRun deletes a run that has ended (KLN-4010 otherwise); with
	// force, it cancels it first and deletes it once it has ended.
	DeleteRun(ctx context.Context, id apiv1.RunID, force bool) error
	// SendGateInput sends an approval or a rejection (in.Approve) or a
	// signal (in.Value) to gate task node of run id. in.By says who sent
	// it: the server sets it from the request's token, never from the
	// body. KLN-4014 when the task is not a gate waiting for it.
	SendGateInput(ctx context.Context, id apiv1.RunID, node string, in apiv1.GateInput) error
}

// Config configures a Server.
type Config struct {
	Store   store.Store
	Engine  Engine
	Secrets SecretKeeper
	// Templates keeps the projects' WorkflowTemplates.
	Templates TemplateKeeper
	// Schedules keeps the projects' Schedules; nil serves none.
	Schedules ScheduleKeeper
	// Runtimes keeps the stored training runtimes; nil lists the
	// built-in ones alone.
	Runtimes RuntimeKeeper
	// Cache keeps the results of cached tasks; nil serves no cache routes.
	Cache CacheKeeper
	// Artifacts serves the artifacts runs' tasks stored.
	Artifacts ArtifactKeeper
	// Limits bound what clients may take of the server. Zero fields take
	// the defaults of DefaultLimits.
	Limits Limits
	// Poll is how often streams look for news. Default 200ms.
	Poll time.Duration
	// Party is this server's party identity (kiln serve --party); empty:
	// none, and the federation routes answer 404 KLN-7002.
	Party string
	// PartyHost runs this server's parts of federated runs; nil: none
	// (KLN-7002). Parties keeps the parties it federates with.
	PartyHost PartyHost
	Parties   PartyKeeper
	// Channel is the federation channel of this server's shares; nil:
	// none (KLN-7002).
	Channel ChannelHost
	// Metrics serves /metrics; nil serves none. MetricsPublic serves it
	// without a token; by default it needs a viewer's.
	Metrics       http.Handler
	MetricsPublic bool
	// Requests records each request answered; nil records none.
	Requests RequestObserver
	// Leadership says who leads the replicas that share the store, and
	// whether it is this one, for /readyz; nil: this server is the only
	// one and runs the engine.
	Leadership func() (store.Leader, bool)
	Log        *slog.Logger
}

// Server serves the API.
type Server struct {
	cfg     Config
	mux     *http.ServeMux
	submits slots     // submissions being read and checked
	tokens  *limiters // requests per token
	clients *limiters // requests without a known token, per client address
}

// New returns a server. Handler serves it; HTTPServer and Listener serve
// it with its limits.
func New(cfg Config) *Server {
	cfg.Limits = cfg.Limits.withDefaults()
	if cfg.Poll <= 0 {
		cfg.Poll = 200 * time.Millisecond
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	l := cfg.Limits
	s := &Server{
		cfg: cfg, mux: http.NewServeMux(),
		submits: newSlots(l.MaxSubmits, l.SubmitWait),
		tokens:  newLimiters(l.Rate, l.Burst),
		clients: newLimiters(l.ClientRate, l.ClientBurst),
	}
	for _, r := range s.routes() {
		s.mux.Handle(r.pattern, s.observe(r, s.authorize(r)))
	}
	s.mux.HandleFunc(unroutedPattern, func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, s.unrouted(w, r))
	})
	return s
}

// unroutedPattern takes what no route does, of any method: the mux
// matches each request once, and only a miss asks which methods its path
// takes.
const unroutedPattern = "/"

// Handler returns the server's HTTP handler. It applies every limit but
// those of connections and their timeouts, which HTTPServer and Listener
// apply.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := connOf(r.Context()); c != nil {
			defer c.serving()()
		}
		s.mux.ServeHTTP(w, r)
	})
}

// unrouted is the coded answer to a request no route takes: 405 with
// the methods the path takes (Allow), or 404 when it takes none.
func (s *Server) unrouted(w http.ResponseWriter, r *http.Request) error {
	var allow []string
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"} {
		try := r.Clone(r.Context())
		try.Method = m
		if _, pattern := s.mux.Handler(try); pattern != "" && pattern != unroutedPattern {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		return &httpError{status: http.StatusNotFound, err: apiv1.Errorf(apiv1.CodeNoRoute, fmt.Sprintf("no route %s", r.URL.Path))}
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	return &httpError{status: http.StatusMethodNotAllowed, err: apiv1.Errorf(apiv1.CodeMethod,
		fmt.Sprintf("%s takes %s, not %s", r.URL.Path, strings.Join(allow, ", "), r.Method))}
}

// HTTPServer returns an http.Server that serves Handler with the
// timeouts of s's Limits; serve it on Listener. Streams (events, logs)
// lift the read deadline and renew the write deadline before each write,
// so they last as long as they have something to say.
func (s *Server) HTTPServer() *http.Server {
	l := s.cfg.Limits
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ConnContext:       withConn,
	}
}

// maxHeaderBytes bounds a request's headers; a bearer token and the usual
// headers take a few hundred bytes. (net/http's default is 1 MiB.)
const maxHeaderBytes = 64 << 10

// Listener wraps ln so that a connection beyond MaxConnsPerClient from
// one client is closed as soon as it is accepted, and one beyond MaxConns
// in all takes the place of the longest idle connection that never
// presented a credential (see limitListener).
func (s *Server) Listener(ln net.Listener) net.Listener {
	return newLimitListener(ln, s.cfg.Limits.MaxConns, s.cfg.Limits.MaxConnsPerClient, s.cfg.Log)
}

// route is one endpoint: who may call it and what it does.
type route struct {
	pattern string // "METHOD /path", as http.ServeMux takes it
	role    role   // the least role it needs; public routes need none
	handle  func(w http.ResponseWriter, r *http.Request, p *principal) error
}

func (s *Server) routes() []route {
	return append([]route{
		{"GET /healthz", public, s.healthz},
		{"GET /readyz", public, s.readyz},
		{"GET /api/v1/openapi.json", public, s.openapi},
		{"GET /api/v1/schemas/{name}", public, s.schema},
		{"GET /api/v1/version", public, s.version},
		{"GET /api/v1/whoami", public, s.whoami},
		{"POST /api/v1/runs", editor, s.submit},
		{"GET /api/v1/runs", viewer, cached(s.runsOrWatch)},
		{"GET /api/v1/runs/{id}", viewer, cached(s.getRun)},
		{"GET /api/v1/runs/{id}/nodes", viewer, cached(s.listNodes)},
		{"GET /api/v1/runs/{id}/trainjob", viewer, s.getTrainJob},
		{"DELETE /api/v1/runs/{id}", editor, s.deleteRun},
		{"POST /api/v1/runs/{id}/cancel", editor, s.cancel},
		{"POST /api/v1/runs/{id}/stop", editor, s.stop},
		{"POST /api/v1/runs/{id}/retry", editor, s.retry},
		{"POST /api/v1/runs/{id}/rerun", editor, s.rerun},
		{"POST /api/v1/runs/{id}/suspend", editor, s.suspend(true)},
		{"POST /api/v1/runs/{id}/unsuspend", editor, s.suspend(false)},
		{"POST /api/v1/runs/{id}/nodes/{node}/approve", editor, s.approve},
		{"POST /api/v1/runs/{id}/nodes/{node}/signal", editor, s.signal},
		{"GET /api/v1/runs/{id}/events", viewer, cached(s.events)},
		{"GET /api/v1/runs/{id}/tasks/{task}/logs", viewer, s.logs},
		{"GET /api/v1/runs/{id}/artifacts", viewer, s.listArtifacts},
		{"GET /api/v1/runs/{id}/artifacts/{node}/{name}", viewer, s.getArtifact},
		{"GET /api/v1/cache/{key}/artifacts/{name}", viewer, s.getCacheArtifact},
		{"GET /api/v1/runtimes", viewer, s.listRuntimes},
		{"GET /api/v1/runtimes/{name}", viewer, s.getRuntime},
		{"DELETE /api/v1/runtimes/{name}", editor, s.deleteRuntime},
		{"POST /api/v1/apply", editor, s.applyAll},
		{"GET /api/v1/quotas", viewer, s.listQuotas},
		{"DELETE /api/v1/quotas/{name}", editor, s.deleteQuota},
		{"GET /api/v1/secrets", viewer, s.listSecrets},
		{"PUT /api/v1/secrets/{name}", editor, s.putSecret},
		{"DELETE /api/v1/secrets/{name}", editor, s.deleteSecret},
		{"POST /api/v1/templates", editor, s.applyTemplates},
		{"GET /api/v1/templates", viewer, s.listTemplates},
		{"GET /api/v1/templates/{name}", viewer, s.getTemplate},
		{"PUT /api/v1/templates/{name}", editor, s.putTemplate},
		{"DELETE /api/v1/templates/{name}", editor, s.deleteTemplate},
		{"GET /api/v1/cache", viewer, s.listCache},
		{"DELETE /api/v1/cache/{key}", editor, s.deleteCacheEntry},
		{"POST /api/v1/cache/prune", editor, s.pruneCache},
		{"GET /metrics", s.metricsRole(), s.metrics},
		{"GET /{$}", public, s.ui},
		{"GET /ui/", public, s.ui},
		{"GET /api/v1/parties", admin, s.listParties},
		{"PUT /api/v1/parties/{name}", admin, s.putParty},
		{"DELETE /api/v1/parties/{name}", admin, s.deleteParty},
	}, append(append(s.federationRoutes(), s.channelRoutes()...), s.scheduleRoutes()...)...)
}

// ui serves the web UI's files. They hold no data: the page asks the API,
// with the user's token, for everything it shows.
func (s *Server) ui(w http.ResponseWriter, r *http.Request, _ *principal) error {
	if r.URL.Path == "/" {
		coded(w, r, http.HandlerFunc(web.Index))
		return nil
	}
	coded(w, r, http.StripPrefix("/ui", web.Assets()))
	return nil
}

// metricsRole is who may read /metrics: a viewer, or anyone if public.
func (s *Server) metricsRole() role {
	if s.cfg.MetricsPublic {
		return public
	}
	return viewer
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request, _ *principal) error {
	if s.cfg.Metrics == nil {
		return &httpError{status: http.StatusNotFound, err: apiv1.Errorf(apiv1.CodeBadRequest, "metrics are not enabled")}
	}
	coded(w, r, s.cfg.Metrics)
	return nil
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request, _ *principal) error {
	_, err := w.Write([]byte("ok\n"))
	return err
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request, _ *principal) error {
	if _, err := s.cfg.Store.ListRuns(r.Context(), store.ListRunsParams{Limit: 1}); err != nil {
		return &httpError{status: http.StatusServiceUnavailable, err: apiv1.Errorf(apiv1.CodeInternal, "the store is not ready: "+err.Error())}
	}
	_, err := w.Write([]byte("ok\n" + s.leadership()))
	return err
}

// httpError is an *apiv1.Error with its HTTP status, and for a refusal
// that a later try may not meet, when to try again.
type httpError struct {
	status     int
	err        *apiv1.Error
	retryAfter time.Duration
}

func (e *httpError) Error() string { return e.err.Error() }

// statusClientClosed is what the request metrics count for a request
// whose client went away before its answer, as nginx counts it.
const statusClientClosed = 499

// lateAnswer is the time a 408 or a KLN-4062 has to be written, whatever
// is left of the write timeout.
const lateAnswer = 10 * time.Second

// writeError answers with every coded error in err, as JSON.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, errs := statusOf(err)
	errs = namedRun(errs, r.PathValue("id"))
	var he *httpError
	if errors.As(err, &he) && he.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((he.retryAfter+time.Second-1)/time.Second)))
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		// The client went away: nothing failed here, and no one reads the answer.
		s.cfg.Log.Debug("request ended: the client went away", "method", r.Method, "route", r.Pattern)
		w.WriteHeader(statusClientClosed)
		return
	}
	if status == http.StatusRequestTimeout || (len(errs) > 0 && errs[0].Code == apiv1.CodeSubmitDeadline) {
		// The read timeout ended the body, or a submission's check ran to
		// its deadline short of the write timeout, and the write timeout,
		// counted from nearly the same moment, may be as spent (a loaded
		// machine can take the margin): give the answer time of its own,
		// or the client that was promised a 408 or a 503 gets none.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(lateAnswer))
	}
	if status == http.StatusInternalServerError {
		s.cfg.Log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		errs = []*apiv1.Error{apiv1.Errorf(apiv1.CodeInternal, "internal error")}
	}
	writeJSON(w, status, apiv1.ErrorList{Errors: withHints(errs)})
}

// withHints spells out each error's hint: an error without one has its
// code's registered hint, which a client cannot look up.
func withHints(errs []*apiv1.Error) []*apiv1.Error {
	out := make([]*apiv1.Error, len(errs))
	for i, e := range errs {
		out[i] = e
		if e.Hint == "" && e.Code.Hint() != "" {
			hinted := *e
			hinted.Hint = e.Code.Hint()
			out[i] = &hinted
		}
	}
	return out
}

func statusOf(err error) (int, []*apiv1.Error) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, []*apiv1.Error{he.err}
	}
	if errors.Is(err, store.ErrNotFound) {
		return http.StatusNotFound, []*apiv1.Error{apiv1.Errorf(apiv1.CodeRunNotFound, "no such run")}
	}
	coded := apiv1.Errors(err)
	if len(coded) == 0 {
		return http.StatusInternalServerError, nil
	}
	status := codeStatus(coded[0].Code)
	if status == http.StatusInsufficientStorage {
		// The client is told the server's disk is full, and how full, not
		// where the server keeps its store.
		full := *coded[0]
		full.File = ""
		coded = []*apiv1.Error{&full}
	}
	return status, coded
}

// codeStatus is the HTTP status of an error with code c.
func codeStatus(c apiv1.Code) int {
	if status, ok := partyStatus(c); ok {
		return status
	}
	switch c {
	case apiv1.CodeRunNotFound, apiv1.CodeSecretNotFound, apiv1.CodeNoTemplate, apiv1.CodeNoSchedule, apiv1.CodeNoCacheEntry, apiv1.CodeNotTrainJob, apiv1.CodeNoRuntime, apiv1.CodeNoQuota, apiv1.CodeNoArtifact:
		return http.StatusNotFound
	case apiv1.CodeRunPhase, apiv1.CodeNotWaiting, apiv1.CodeBuiltinRuntime, apiv1.CodeKeyReused:
		return http.StatusConflict
	case apiv1.CodeForbidden:
		return http.StatusForbidden
	case apiv1.CodeStaleVersion:
		return http.StatusGone
	case apiv1.CodeBodyTooLarge:
		return http.StatusRequestEntityTooLarge
	case apiv1.CodeRateLimited:
		return http.StatusTooManyRequests
	case apiv1.CodeBusy, apiv1.CodeStoreBusy:
		return http.StatusServiceUnavailable
	case apiv1.CodeStoreFull:
		return http.StatusInsufficientStorage
	}
	switch c[4] {
	case '2':
		return http.StatusUnprocessableEntity
	case '5', '6':
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
