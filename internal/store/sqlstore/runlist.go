package sqlstore

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"kiln.dev/kiln/internal/store"
)

// listQuery is ListRuns' SELECT and its arguments. Every filter is a
// column of runs that an index (migrations: runs_by_*) leads with, or,
// for the search, a test on rows the ordered index hands over, so that
// a page reads about as many rows as it keeps.
func (s *Store) listQuery(p store.ListRunsParams) (string, []any, error) {
	where, args, err := s.listFilters(p)
	if err != nil {
		return "", nil, err
	}
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
	return query + ` ORDER BY created_at ` + order + `, id ` + order + ` LIMIT ?`, append(args, limit), nil
}

// listFilters are the WHERE clauses of p's filters, and their arguments.
func (s *Store) listFilters(p store.ListRunsParams) ([]string, []any, error) {
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
	reqs, err := store.ParseSelector(p.Label)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range reqs {
		clause, a := s.labelClause(r)
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
	return where, args, nil
}

// labelClause is the WHERE clause of one requirement of a label
// selector, and its arguments. As in Kubernetes, != and notin keep runs
// without the key.
func (s *Store) labelClause(r labels.Requirement) (string, []any) {
	value, key := s.dialect.LabelValue(r.Key())
	vals := toAny(r.Values().List())
	in := "(" + strings.TrimSuffix(strings.Repeat("?,", len(vals)), ",") + ")"
	switch r.Operator() {
	case selection.Exists:
		return value + " IS NOT NULL", key
	case selection.DoesNotExist:
		return value + " IS NULL", key
	case selection.NotEquals:
		return "(" + value + " IS NULL OR " + value + " <> ?)", slices.Concat(key, key, vals)
	case selection.NotIn:
		return "(" + value + " IS NULL OR " + value + " NOT IN " + in + ")", slices.Concat(key, key, vals)
	default: // =, == and in: ParseSelector lets no other operator through
		return value + " IN " + in, slices.Concat(key, vals)
	}
}

// likeEscaper makes LIKE's wildcards and its escape character literal.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
