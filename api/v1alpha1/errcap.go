package v1alpha1

import (
	"errors"
	"strconv"
	"strings"
)

// MaxOfKind is how many errors of one kind (one code at one field
// pattern) a list of errors holds; CapErrors counts the rest.
const MaxOfKind = 50

// ErrorKind names the kind of an error with code at field: the code and
// the field with every list index written [*], so that the same mistake
// in each of many tasks is one kind.
func ErrorKind(code Code, field string) string {
	if !strings.Contains(field, "[") {
		return string(code) + " " + field
	}
	var b strings.Builder
	b.Grow(len(code) + 1 + len(field))
	b.WriteString(string(code))
	b.WriteByte(' ')
	for i := 0; i < len(field); i++ {
		b.WriteByte(field[i])
		if field[i] != '[' {
			continue
		}
		j := i + 1
		for j < len(field) && field[j] >= '0' && field[j] <= '9' {
			j++
		}
		if j > i+1 && j < len(field) && field[j] == ']' {
			b.WriteByte('*')
			i = j - 1
		}
	}
	return b.String()
}

// CapErrors keeps of errs the first MaxOfKind errors of each kind (see
// ErrorKind), in their order, and puts after the last kept one of a kind
// that had more a KLN-1086 error counting the rest. dropped counts, by
// kind, errors its caller already left out (nil: none). Errors that are
// not *Error are kept.
func CapErrors(errs []error, dropped map[string]int) []error {
	counts := map[string]int{}
	for _, err := range errs {
		var e *Error
		if errors.As(err, &e) {
			counts[ErrorKind(e.Code, e.Field)]++
		}
	}
	if !overCap(counts, dropped) {
		return errs
	}
	kept := make([]error, 0, len(errs))
	seen := map[string]int{}
	for _, err := range errs {
		var e *Error
		if !errors.As(err, &e) {
			kept = append(kept, err)
			continue
		}
		kind := ErrorKind(e.Code, e.Field)
		if seen[kind]++; seen[kind] > MaxOfKind {
			continue
		}
		kept = append(kept, err)
		total := counts[kind] + dropped[kind]
		if last := min(counts[kind], MaxOfKind); seen[kind] == last && total > last {
			kept = append(kept, moreErrors(e, kind, total-last))
		}
	}
	return kept
}

// overCap says some kind has more than MaxOfKind errors.
func overCap(counts, dropped map[string]int) bool {
	for kind, n := range counts {
		if n+dropped[kind] > MaxOfKind {
			return true
		}
	}
	return false
}

// moreErrors is the KLN-1086 error that counts n errors like e, of kind,
// left out.
func moreErrors(e *Error, kind string, n int) *Error {
	return &Error{
		Code: CodeMoreErrors, File: e.File, Object: e.Object, Field: kind[len(e.Code)+1:],
		Message:     "… and " + thousands(n) + " more " + string(e.Code) + " like these",
		Omitted:     n,
		OmittedCode: e.Code,
	}
}

// thousands writes n with a comma between each group of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
