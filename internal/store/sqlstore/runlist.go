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
// a page reads about as many rows as it keeps. A label selector with a
// requirement that a label be there (=, in, exists) is read from
// run_labels' indices in the list's order instead (see leadOf), and its
// other requirements are each a lookup of the run's label by key.
func (s *Store) listQuery(p store.ListRunsParams) (string, []any, error) {
	reqs, err := store.ParseSelector(p.Label)
	if err != nil {
		return "", nil, err
	}
	lead, rest := leadOf(reqs)
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	order := " DESC"
	if p.Ascending {
		order = " ASC"
	}
	if lead == nil {
		where, args := listFilters(p, rest, "runs.created_at", "runs.id")
		return `SELECT ` + qualifiedRunColumns + ` FROM runs` + whereOf(where) +
			` ORDER BY runs.created_at` + order + `, runs.id` + order + ` LIMIT ?`, append(args, limit), nil
	}
	values := lead.Values().List() // sorted; none for exists
	if lead.Operator() == selection.Exists {
		values = []string{""}
	}
	var branches []string
	var args []any
	for _, v := range values {
		where, a := listFilters(p, rest, "l.created_at", "l.run_id")
		head, headArgs := "l.key = ?", []any{lead.Key()}
		if lead.Operator() != selection.Exists {
			head, headArgs = head+" AND l.value = ?", append(headArgs, v)
		}
		branches = append(branches, `SELECT `+qualifiedRunColumns+` FROM run_labels l CROSS JOIN runs`+
			whereOf(append([]string{head, "runs.id = l.run_id"}, where...))+
			` ORDER BY l.created_at`+order+`, l.run_id`+order+` LIMIT ?`)
		args = append(append(append(args, headArgs...), a...), limit)
	}
	if len(branches) == 1 {
		return branches[0], args, nil
	}
	// One ordered page per value, merged: a run has one value of a key,
	// so the pages are apart, and the first limit of their union is the
	// page.
	for i, b := range branches {
		branches[i] = `SELECT * FROM (` + b + `) AS v`
	}
	return strings.Join(branches, " UNION ALL ") + ` ORDER BY created_at` + order + `, id` + order + ` LIMIT ?`,
		append(args, limit), nil
}

// qualifiedRunColumns are runColumns, each named with its table.
var qualifiedRunColumns = "runs." + strings.ReplaceAll(runColumns, ", ", ", runs.")

func whereOf(where []string) string {
	if len(where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(where, " AND ")
}

// leadOf picks the requirement of a selector whose runs an index of
// run_labels hands over in the list's order: one value (= or in with
// one value) before several, several before any (exists). The rest are
// tested on each run that index hands over. A selector with no such
// requirement (only !=, notin and !key) has no lead: the runs are read
// in the list's order, each tested with a lookup of its label.
func leadOf(reqs labels.Requirements) (*labels.Requirement, labels.Requirements) {
	best, rank := -1, 0
	for i, r := range reqs {
		k := 0
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			k = 3
			if r.Values().Len() > 1 {
				k = 2
			}
		case selection.Exists:
			k = 1
		}
		if k > rank {
			best, rank = i, k
		}
	}
	if best < 0 {
		return nil, reqs
	}
	return &reqs[best], slices.Delete(slices.Clone(reqs), best, best+1)
}

// listFilters are the WHERE clauses of p's filters but the lead's, and
// their arguments; at and id name the columns of the list's order: the
// run's, or the lead label's copy of them, so that the cursor and the
// time window narrow the index read.
func listFilters(p store.ListRunsParams, reqs labels.Requirements, at, id string) ([]string, []any) {
	var where []string
	var args []any
	add := func(clause string, a ...any) { where, args = append(where, clause), append(args, a...) }
	phases := toAny(p.Phases)
	if p.Phase != "" {
		phases = append(phases, string(p.Phase))
	}
	if len(phases) > 0 {
		add("runs.phase IN ("+placeholders(len(phases))+")", phases...)
	}
	if p.Unfinished {
		add("runs.done = 0")
	}
	if p.Name != "" {
		add("runs.name = ?", p.Name)
	}
	if len(p.Projects) > 0 {
		add("runs.project IN ("+placeholders(len(p.Projects))+")", toAny(p.Projects)...)
	}
	for _, r := range reqs {
		clause, a := labelClause(r)
		add(clause, a...)
	}
	if !p.Since.IsZero() {
		add(at+" >= ?", p.Since.UnixNano())
	}
	if !p.Until.IsZero() {
		add(at+" < ?", p.Until.UnixNano())
	}
	if p.Search != "" {
		pattern := "%" + likeEscaper.Replace(strings.ToLower(p.Search)) + "%"
		add(`(LOWER(runs.id) LIKE ? ESCAPE '\' OR LOWER(runs.name) LIKE ? ESCAPE '\')`, pattern, pattern)
	}
	if c := p.After; c != nil {
		older := "<"
		if p.Ascending {
			older = ">"
		}
		n := c.CreatedAt.UnixNano()
		add("("+at+" "+older+" ? OR ("+at+" = ? AND "+id+" "+older+" ?))", n, n, c.ID)
	}
	return where, args
}

// labelClause is the WHERE clause of one requirement of a label
// selector, and its arguments: a lookup of the run's label by key. As in
// Kubernetes, != and notin keep runs without the key.
func labelClause(r labels.Requirement) (string, []any) {
	const has = `EXISTS (SELECT 1 FROM run_labels x WHERE x.run_id = runs.id AND x.key = ?`
	vals := toAny(r.Values().List())
	in := " AND x.value IN (" + placeholders(len(vals)) + "))"
	key := []any{r.Key()}
	switch r.Operator() {
	case selection.Exists:
		return has + ")", key
	case selection.DoesNotExist:
		return "NOT " + has + ")", key
	case selection.NotEquals, selection.NotIn:
		return "NOT " + has + in, slices.Concat(key, vals)
	default: // =, == and in: ParseSelector lets no other operator through
		return has + in, slices.Concat(key, vals)
	}
}

// placeholders is n placeholders, comma separated.
func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

// likeEscaper makes LIKE's wildcards and its escape character literal.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
