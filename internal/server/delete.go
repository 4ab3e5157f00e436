package server

import (
	"net/http"
	"strconv"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// deleteRun deletes a run; ?force=true cancels it first.
func (s *Server) deleteRun(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	force := false
	if v := r.URL.Query().Get("force"); v != "" {
		if force, err = strconv.ParseBool(v); err != nil {
			return badRequest("force %q is not true or false", v)
		}
	}
	if err := s.cfg.Engine.DeleteRun(r.Context(), run.ID, force); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, apiv1.RunDeleted{Run: run.ID, Deleted: true})
	return nil
}
