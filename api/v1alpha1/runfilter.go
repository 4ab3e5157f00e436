package v1alpha1

import (
	"fmt"
	"strings"
	"time"
)

// MaxRunPage is the most runs one page of a runs list holds (the limit
// of GET /api/v1/runs and kiln get runs --limit).
const MaxRunPage = 500

// ParsePhases reads a comma-separated list of run phases, in any case:
// "running,FAILED". An empty string is no filter. A name that is no run
// phase is KLN-4050, naming it and the phases there are.
func ParsePhases(s string) ([]Phase, error) {
	var out []Phase
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, ok := ParseRunPhase(part)
		if !ok {
			return nil, &Error{Code: CodeUnknownPhase, Field: "phase", Message: fmt.Sprintf("%q is not a phase a run can be in; the phases are %s", part, phaseNames())}
		}
		out = append(out, p)
	}
	return out, nil
}

func phaseNames() string {
	var names []string
	for _, p := range RunPhases() {
		names = append(names, string(p))
	}
	return strings.Join(names, ", ")
}

// ParseTimeAgo reads a time filter: an RFC 3339 time, or a duration such
// as "2h" meaning that long before now. field names the filter in the
// KLN-4051 error a malformed or negative value gets.
func ParseTimeAgo(field, s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, &Error{Code: CodeBadTime, Field: field, Message: fmt.Sprintf("%q is neither an RFC 3339 time nor a duration such as 2h", s)}
}
