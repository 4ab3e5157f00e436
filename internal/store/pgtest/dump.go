package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// DumpSchema returns the SQL that makes the tables, sequences, indexes
// and constraints of the database at dsn on s, as pg_dump writes it, less
// what depends on the session or on the server that wrote it: comments,
// psql's commands (\restrict and its random key), SET lines, the search path pg_dump clears, and the schema name public
// that pg_dump writes before every name (so that the SQL makes its objects
// in the search path's schema, as kiln's migrations do). Two databases
// with equal dumps on one server have the same schema. The tables named in
// exclude are left out.
func (s *Server) DumpSchema(ctx context.Context, dsn string, exclude ...string) (string, error) {
	args := []string{
		"--schema-only", "--no-owner", "--no-privileges", "--no-comments", "--no-tablespaces",
		"--no-security-labels", "--no-publications", "--no-subscriptions", "--dbname", dsn,
	}
	for _, t := range exclude {
		args = append(args, "--exclude-table", t)
	}
	out, err := exec.CommandContext(ctx, filepath.Join(s.bin, "pg_dump"), args...).Output()
	if err != nil {
		var stderr string
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		return "", fmt.Errorf("pg_dump: %w: %s", err, stderr)
	}
	var b strings.Builder
	blank := true
	for line := range strings.Lines(string(out)) {
		switch {
		case strings.HasPrefix(line, "--"), strings.HasPrefix(line, `\`), strings.HasPrefix(line, "SET "),
			strings.HasPrefix(line, "SELECT pg_catalog.set_config("):
			continue
		case strings.TrimSpace(line) == "":
			if !blank {
				b.WriteString("\n")
			}
			blank = true
			continue
		}
		blank = false
		b.WriteString(strings.ReplaceAll(line, "public.", ""))
	}
	return strings.TrimSpace(b.String()) + "\n", nil
}
