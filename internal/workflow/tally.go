package workflow

import (
	"errors"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// tally counts the errors of one list by kind (apiv1.ErrorKind) as they
// are found, so that the list keeps the first apiv1.MaxOfKind of each
// kind and only counts the rest: a spec with one mistake in each of
// 100,000 tasks costs 50 errors, not 100,000.
type tally struct {
	seen, dropped map[string]int
}

// keep counts one error of code at field and says whether the list
// still takes it; one it does not take is counted in dropped.
func (t *tally) keep(code apiv1.Code, field string) bool {
	if t.seen == nil {
		t.seen, t.dropped = map[string]int{}, map[string]int{}
	}
	kind := apiv1.ErrorKind(code, field)
	if t.seen[kind] < apiv1.MaxOfKind {
		t.seen[kind]++
		return true
	}
	t.dropped[kind]++
	return false
}

// merge adds the errors other dropped to t's.
func (t *tally) merge(other *tally) {
	for kind, n := range other.dropped {
		if t.dropped == nil {
			t.seen, t.dropped = map[string]int{}, map[string]int{}
		}
		t.dropped[kind] += n
	}
}

// capped is errs with at most apiv1.MaxOfKind errors of each kind and,
// after the last of a kind that had more, a KLN-1086 error counting the
// rest: those beyond the bound in errs and those t dropped.
func (t *tally) capped(errs []error) []error {
	return apiv1.CapErrors(errs, t.dropped)
}

// join is capped(errs) joined; nil when errs is empty.
func (t *tally) join(errs []error) error {
	return errors.Join(t.capped(errs)...)
}

// comparePaths orders field paths as the document holds them: list
// indices by number (spec.tasks[9] before spec.tasks[10]), the rest by
// byte.
func comparePaths(a, b string) int {
	for len(a) > 0 && len(b) > 0 {
		if isDigit(a[0]) && isDigit(b[0]) {
			na, nb := digits(a), digits(b)
			if c := cmpNumber(a[:na], b[:nb]); c != 0 {
				return c
			}
			a, b = a[na:], b[nb:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digits is how many digits s starts with.
func digits(s string) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}

// cmpNumber compares two runs of digits as numbers.
func cmpNumber(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
