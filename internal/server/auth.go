package server

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/suggest"
)

// role orders what a token may do.
type role int

const (
	public role = iota
	viewer      // reads runs, events, logs and runtimes of its projects
	editor      // also submits, cancels and suspends
	admin       // also manages tokens
)

var roleNames = map[string]role{"viewer": viewer, "editor": editor, "admin": admin}

// principal is the caller of a request.
type principal struct {
	token    *store.Token
	party    string // the calling party, on a federation route; token is nil
	role     role
	projects []string // "*" is every project
}

// may reports whether the caller may touch project.
func (p *principal) may(project string) bool {
	return p != nil && (slices.Contains(p.projects, "*") || slices.Contains(p.projects, project))
}

// authorize admits a request (its rate, its bearer token and role, the
// size of its body) before calling the route, and turns what it returns,
// or a panic, into a response.
func (s *Server) authorize(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer s.recovered(w, r)
		s.announce(w, rt)
		p, err := s.admit(r, rt.role)
		if c := connOf(r.Context()); c != nil && p != nil && err == nil {
			c.trust()
		}
		if err == nil {
			err = s.checkBodySize(w, r)
		}
		if p != nil && p.token != nil {
			w.Header().Set("Kiln-Role", p.token.Role) // the UI shows what the token may do
		}
		if err == nil {
			err = rt.handle(w, r, p)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

// healthPath is never rate limited: answering it costs nothing, and
// whoever watches the server must not be told it is down.
const healthPath = "/healthz"

// admit returns the caller of a route that needs role, and takes the
// request from the caller's allowance: its token's, or for a request
// without a known token, its client address's. A known token is never
// held back by what others did from the same address (a NAT, a proxy).
func (s *Server) admit(r *http.Request, need role) (*principal, error) {
	client := clientKey(r.RemoteAddr)
	if need == partyRole {
		return s.admitParty(r)
	}
	if need == channelRole { // the route checks the token against its path
		return nil, s.tokens.take("channel/" + r.PathValue("part") + "/" + r.PathValue("share"))
	}
	if need == public {
		if r.URL.Path == healthPath {
			return nil, nil
		}
		return nil, s.clients.take(client)
	}
	p, err := s.principal(r)
	var he *httpError
	if errors.As(err, &he) && he.status == http.StatusUnauthorized {
		return nil, cmp.Or(s.clients.take(client), err)
	}
	if err != nil {
		return nil, err
	}
	if err := s.tokens.take(p.token.ID); err != nil {
		return nil, err
	}
	if p.role < need {
		return nil, forbidden("this needs a token with a role of at least %s", roleName(need))
	}
	return p, nil
}

// checkBodySize refuses a body over MaxBody by its Content-Length, before
// reading any of it, and bounds a body of unknown length as it is read.
func (s *Server) checkBodySize(w http.ResponseWriter, r *http.Request) error {
	limit := s.cfg.Limits.MaxBody
	if r.ContentLength > limit {
		return bodyTooLarge(limit)
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	return nil
}

func bodyTooLarge(limit int64) error {
	return &httpError{status: http.StatusRequestEntityTooLarge, err: apiv1.Errorf(apiv1.CodeBodyTooLarge,
		fmt.Sprintf("the body is over %d bytes", limit))}
}

func (s *Server) principal(r *http.Request) (*principal, error) {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || raw == "" {
		return nil, &httpError{status: http.StatusUnauthorized, err: apiv1.Errorf(apiv1.CodeUnauthenticated, "no bearer token")}
	}
	t, err := s.cfg.Store.TokenByHash(r.Context(), HashToken(raw))
	if errors.Is(err, store.ErrNotFound) {
		return nil, &httpError{status: http.StatusUnauthorized, err: apiv1.Errorf(apiv1.CodeUnauthenticated, "the token is unknown or revoked")}
	}
	if err != nil {
		return nil, err
	}
	return &principal{token: t, role: roleNames[t.Role], projects: t.Projects}, nil
}

func forbidden(format string, args ...any) error {
	return &httpError{status: http.StatusForbidden, err: apiv1.Errorf(apiv1.CodeForbidden, fmt.Sprintf(format, args...))}
}

func roleName(r role) string {
	for name, v := range roleNames {
		if v == r {
			return name
		}
	}
	return "none"
}

// HashToken is how tokens are kept: their SHA-256, in hex.
func HashToken(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])
}

// CreateToken makes a token, stores its hash and returns its value, which
// is shown once and kept nowhere.
func CreateToken(ctx context.Context, tokens store.Tokens, name, roleName string, projects []string) (string, *store.Token, error) {
	if _, ok := roleNames[roleName]; !ok {
		msg := fmt.Sprintf("role %q is not one of viewer, editor, admin", roleName)
		if s := suggest.Phrase(suggest.Closest(roleName, slices.Sorted(maps.Keys(roleNames))), strconv.Quote); s != "" {
			msg += "; " + s
		}
		return "", nil, &apiv1.Error{Code: apiv1.CodeUsage, Field: "--role", Message: msg}
	}
	if len(projects) == 0 {
		return "", nil, apiv1.Errorf(apiv1.CodeUsage, "a token needs at least one project (or *)")
	}
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return "", nil, err
	}
	raw := "kln_" + hex.EncodeToString(secret)
	id := make([]byte, 4)
	_, _ = rand.Read(id)
	t := &store.Token{
		ID: hex.EncodeToString(id), Name: name, Hash: HashToken(raw), Role: roleName, Projects: projects,
		CreatedAt: time.Now().UTC(),
	}
	return raw, t, tokens.CreateToken(ctx, *t)
}
