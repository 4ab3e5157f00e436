// Package suggest finds what a user meant by a word that is not one of
// those allowed: a mistyped field, flag or command ("did you mean ...?").
package suggest

import (
	"slices"
	"strings"
	"unicode"
)

// Closest returns the candidates nearest to word, best first: those
// within a few edits of it (a third of its length, at least 1, at most
// 3; case and - or _ ignored), and those that word is a prefix of when it
// is 3 or more letters long. At most 3 come back; none when nothing is
// close, so that a suggestion is never a guess.
func Closest(word string, candidates []string) []string {
	w := fold(word)
	limit := min(max(len(w)/3, 1), 3)
	type scored struct {
		name string
		d    int
	}
	var near []scored
	for _, c := range candidates {
		f := fold(c)
		if c == word || f == "" {
			continue
		}
		d := Distance(w, f)
		if len(w) >= 3 && strings.HasPrefix(f, w) && d > limit {
			d = limit // a prefix typed: the rest is close enough
		}
		if d <= limit {
			near = append(near, scored{c, d})
		}
	}
	slices.SortStableFunc(near, func(a, b scored) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, s := range near {
		if !slices.Contains(out, s.name) {
			out = append(out, s.name)
		}
		if len(out) == 3 {
			break
		}
	}
	return out
}

// fold is s in lower case without - and _, so that dependson,
// depends-on and dependsOn are one.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// Distance is the optimal string alignment distance of a and b: the
// insertions, deletions, substitutions and swaps of two neighbouring
// bytes that turn one into the other (retires is 1 from retries).
func Distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Phrase is " did you mean x?" (or "x or y?") for the suggestions, or
// "" for none; quote formats each one.
func Phrase(suggestions []string, quote func(string) string) string {
	if len(suggestions) == 0 {
		return ""
	}
	q := make([]string, len(suggestions))
	for i, s := range suggestions {
		q[i] = quote(s)
	}
	if len(q) == 1 {
		return "did you mean " + q[0] + "?"
	}
	return "did you mean " + strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1] + "?"
}
