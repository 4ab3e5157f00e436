package server

import (
	"context"
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// QuotaKeeper lists the projects' stored quotas (ProjectQuota, stored
// with kiln apply); the embedded engine (internal/app) is one.
type QuotaKeeper interface {
	ListQuotas(ctx context.Context) ([]apiv1.ProjectQuota, error)
}

// listQuotas lists the quotas of the projects the token may see.
func (s *Server) listQuotas(w http.ResponseWriter, r *http.Request, p *principal) error {
	k, ok := s.cfg.Engine.(QuotaKeeper)
	if !ok {
		return &httpError{status: http.StatusNotFound, err: apiv1.Errorf(apiv1.CodeBadRequest, "this server keeps no quotas")}
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
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
	return nil
}
