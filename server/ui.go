package server

import (
	"net/http"

	"github.com/kiln-ai/kiln/server/ui"
)

// ui serves GET /ui (index.html) and /ui/{file}: the dashboard's files
// (package server/ui).
func (s *Server) ui(w http.ResponseWriter, r *http.Request) error {
	data, ctype, ok := ui.File(r.PathValue("file"))
	if !ok {
		return notFound(w, r)
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(data)
	return err
}
