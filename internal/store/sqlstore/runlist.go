package sqlstore

import (
	"strings"

	"kiln.dev/kiln/internal/store"
)

// listQuery is ListRuns' SELECT and its arguments. Every filter is a
// column of runs that an index (migrations: runs_by_*) leads with, or,
// for the search, a test on rows the ordered index hands over, so that
// a page reads about as many rows as it keeps.
func (s *Store) listQuery(p store.ListRunsParams) (string, []any) {
	where, args := s.listFilters(p)
	order, older := "DESC", "<"
	if p.Ascending {
		order, older = "ASC", ">"
	}
	if c := p.After; c != nil {
		n := c.CreatedAt.UnixNano()
		where = append(where, "(created_at "+older+" ? OR (created_at = ? AND id "+older+" ?))")
		args = append(args, n, n, c.ID)
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	query := `SELECT ` + runColumns + ` FROM runs`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	return query + ` ORDER BY created_at ` + order + `, id ` + order + ` LIMIT ?`, append(args, limit)
}

// listFilters are the WHERE clauses of p's filters, and their arguments.
func (s *Store) listFilters(p store.ListRunsParams) ([]string, []any) {
	var where []string
	var args []any
	add := func(clause string, a ...any) { where, args = append(where, clause), append(args, a...) }
	phases := toAny(p.Phases)
	if p.Phase != "" {
		phases = append(phases, string(p.Phase))
	}
	if len(phases) > 0 {
		add("phase IN (?"+strings.Repeat(",?", len(phases)-1)+")", phases...)
	}
	if p.Unfinished {
		add("done = 0")
	}
	if p.Name != "" {
		add("name = ?", p.Name)
	}
	if len(p.Projects) > 0 {
		add("project IN (?"+strings.Repeat(",?", len(p.Projects)-1)+")", toAny(p.Projects)...)
	}
	if k, v, ok := strings.Cut(p.Label, "="); ok {
		clause, a := s.dialect.LabelEquals(k, v)
		add(clause, a...)
	}
	if !p.Since.IsZero() {
		add("created_at >= ?", p.Since.UnixNano())
	}
	if !p.Until.IsZero() {
		add("created_at < ?", p.Until.UnixNano())
	}
	if p.Search != "" {
		pattern := "%" + likeEscaper.Replace(strings.ToLower(p.Search)) + "%"
		add(`(LOWER(id) LIKE ? ESCAPE '\' OR LOWER(name) LIKE ? ESCAPE '\')`, pattern, pattern)
	}
	return where, args
}

// likeEscaper makes LIKE's wildcards and its escape character literal.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
