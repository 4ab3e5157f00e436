package server

import (
	"context"
	"net/http"
	"regexp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// QuotaKeeper lists and deletes the projects' stored quotas
// (ProjectQuota, stored with kiln apply); the embedded engine
// (internal/app) is one.
type QuotaKeeper interface {
	ListQuotas(ctx context.Context) ([]apiv1.ProjectQuota, error)
	// DeleteQuota removes a project's quota, or returns KLN-4040.
	DeleteQuota(ctx context.Context, project string) error
}

// noQuotas answers the routes of quotas on a server that keeps none.
var noQuotas = &httpError{status: http.StatusNotFound, err: apiv1.Errorf(apiv1.CodeBadRequest, "this server keeps no quotas")}

// listQuotas lists the quotas of the projects the token may see.
func (s *Server) listQuotas(w http.ResponseWriter, r *http.Request, p *principal) error {
	k, ok := s.cfg.Engine.(QuotaKeeper)
	if !ok {
		return noQuotas
	}
	all, err := k.ListQuotas(r.Context())
	if err != nil {
		return err
	}
	items := []apiv1.ProjectQuota{}
	for _, q := range all {
		if p.may(q.Metadata.Name) {
			items = append(items, q)
		}
	}
	writeJSON(w, http.StatusOK, apiv1.QuotaList{Items: items})
	return nil
}

// quotaKind finds a ProjectQuota document in YAML or JSON.
var quotaKind = regexp.MustCompile(`\bkind["']?\s*:\s*["']?ProjectQuota\b`)

// holdsQuotas reports whether files seem to hold a ProjectQuota: only to
// say why a token that may not touch the project is refused.
func holdsQuotas(files []apiv1.SourceFile) bool {
	for _, f := range files {
		if quotaKind.Match(f.Data) {
			return true
		}
	}
	return false
}

// quotaForbidden refuses quotas from a token that is not of every
// project, whatever project the files are sent to.
var quotaForbidden = &httpError{status: http.StatusForbidden, err: &apiv1.Error{
	Code:    apiv1.CodeForbidden,
	Message: "a ProjectQuota shares the machine between projects: storing one needs a token of every project (*)",
	Hint:    "ask whoever runs the server to apply it",
}}

// deleteQuota removes a project's quota, which, as storing one, only a
// token of every project may do.
func (s *Server) deleteQuota(w http.ResponseWriter, r *http.Request, p *principal) error {
	k, ok := s.cfg.Engine.(QuotaKeeper)
	if !ok {
		return noQuotas
	}
	if !p.may("*") {
		return quotaForbidden
	}
	if err := k.DeleteQuota(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
