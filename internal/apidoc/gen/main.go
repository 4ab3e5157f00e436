// Command gen writes kiln's OpenAPI document and the JSON Schemas of its
// kinds into api/openapi, from the Go types of api/ (go generate
// ./api/openapi runs it).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"kiln.dev/kiln/internal/apidoc"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "apidoc:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if err := os.Chdir(root); err != nil {
		return err
	}
	files, err := apidoc.Generate(context.Background())
	if err != nil {
		return err
	}
	out := filepath.Join("api", "openapi")
	if err := os.RemoveAll(filepath.Join(out, "schemas")); err != nil {
		return err
	}
	for name, data := range files {
		path := filepath.Join(out, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// moduleRoot is the nearest directory, from here up, with a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod here or above: run it in kiln's module")
		}
		dir = parent
	}
}
