// Package template finds and expands {{...}} references in task fields.
//
// A reference is a dotted path inside double braces, with optional spaces:
// {{params.epochs}}, {{ tasks.prepare.outputs.parameters.count }}. Text
// outside braces is copied as is. Expansion never involves a shell: the
// expanded string is one argument, whatever it contains.
package template

import (
	"fmt"
	"strings"
)

// Ref is one {{...}} reference.
type Ref struct {
	// Raw is the text between the braces, trimmed.
	Raw string
	// Path is Raw split at dots.
	Path []string
}

// Refs returns every reference in s, in order. It fails on an unclosed
// "{{" or an empty reference.
func Refs(s string) ([]Ref, error) {
	var refs []Ref
	err := walk(s, func(r Ref) string {
		refs = append(refs, r)
		return ""
	}, nil)
	return refs, err
}

// Expand replaces every reference in s with lookup's value for it. lookup
// returns false for a reference it does not know, which is an error.
func Expand(s string, lookup func(Ref) (string, bool)) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	var b strings.Builder
	var missing error
	err := walk(s, func(r Ref) string {
		v, ok := lookup(r)
		if !ok && missing == nil {
			missing = fmt.Errorf("unknown reference {{%s}}", r.Raw)
		}
		return v
	}, &b)
	if err != nil {
		return "", err
	}
	if missing != nil {
		return "", missing
	}
	return b.String(), nil
}

// walk calls fn for each reference in s and, when b is not nil, writes s to
// b with each reference replaced by fn's result.
func walk(s string, fn func(Ref) string, b *strings.Builder) error {
	for {
		open := strings.Index(s, "{{")
		if open < 0 {
			write(b, s)
			return nil
		}
		end := strings.Index(s[open+2:], "}}")
		if end < 0 {
			return fmt.Errorf("unclosed {{ in %q", s)
		}
		raw := strings.TrimSpace(s[open+2 : open+2+end])
		if raw == "" {
			return fmt.Errorf("empty {{}} in %q", s)
		}
		write(b, s[:open])
		write(b, fn(Ref{Raw: raw, Path: strings.Split(raw, ".")}))
		s = s[open+2+end+2:]
	}
}

func write(b *strings.Builder, s string) {
	if b != nil {
		b.WriteString(s)
	}
}
