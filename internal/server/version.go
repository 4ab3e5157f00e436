package server

import (
	"net/http"

	"kiln.dev/kiln/internal/buildinfo"
)

// version answers which kiln serves: its build, as kiln version prints it.
func (s *Server) version(w http.ResponseWriter, _ *http.Request, _ *principal) error {
	writeJSON(w, http.StatusOK, buildinfo.Read())
	return nil
}
