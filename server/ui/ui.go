// Package ui is the dashboard's static files (index.html, its modules
// and its style sheet), embedded in the binary. The server serves them
// under /ui; the page reads everything else through the server's JSON
// routes, with the access token it asks for.
package ui

import (
	"embed"
	"io/fs"
	"path"
)

//go:embed *.html *.js *.css
var files embed.FS

// File returns the named file (a path under /ui, "" for index.html) and
// its Content-Type; ok is false for a file the dashboard does not have.
func File(name string) (data []byte, contentType string, ok bool) {
	if name == "" {
		name = "index.html"
	}
	name = path.Clean(name)
	data, err := fs.ReadFile(files, name)
	if err != nil {
		return nil, "", false
	}
	switch path.Ext(name) {
	case ".html":
		contentType = "text/html; charset=utf-8"
	case ".js":
		contentType = "text/javascript; charset=utf-8"
	case ".css":
		contentType = "text/css; charset=utf-8"
	default:
		contentType = "application/octet-stream"
	}
	return data, contentType, true
}
