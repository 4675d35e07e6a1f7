package server

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
)

// uiFiles is the dashboard, served from the binary.
//
//go:embed ui
var uiFiles embed.FS

// ui serves GET /ui (index.html) and /ui/{file}.
func (s *Server) ui(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("file")
	if name == "" {
		name = "index.html"
	}
	name = path.Clean(name)
	data, err := fs.ReadFile(uiFiles, "ui/"+name)
	if err != nil {
		return notFound(w, r)
	}
	switch path.Ext(name) {
	case ".html":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(data)
	return err
}
