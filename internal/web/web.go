// Package web serves kiln's web UI: static files embedded in the binary,
// talking to the API with the user's token. Building kiln needs no Node.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed dist
var dist embed.FS

func files() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // the embedded tree is part of the binary
	}
	return sub
}

// Index serves the UI's page.
func Index(w http.ResponseWriter, r *http.Request) {
	http.ServeFileFS(w, r, files(), "index.html")
}

// Assets serves the UI's scripts and styles; strip the URL prefix first.
func Assets() http.Handler { return http.FileServerFS(files()) }
