package suggest_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"kiln.dev/kiln/internal/suggest"
)

func TestClosest(t *testing.T) {
	t.Parallel()
	fields := []string{"name", "command", "retries", "dependsOn", "env", "image", "timeout", "when"}
	cases := map[string]struct {
		word       string
		candidates []string
		want       []string
	}{
		"two letters swapped":     {word: "retires", candidates: fields, want: []string{"retries"}},
		"a letter missing":        {word: "comand", candidates: fields, want: []string{"command"}},
		"another case and dashes": {word: "depends-on", candidates: fields, want: []string{"dependsOn"}},
		"a prefix":                {word: "time", candidates: fields, want: []string{"timeout"}},
		"nothing close":           {word: "xyzzy", candidates: fields, want: nil},
		"short words stay exact":  {word: "en", candidates: fields, want: []string{"env"}},
		"best first, at most 3":   {word: "rn", candidates: []string{"run", "rm", "gc", "ls", "rerun"}, want: []string{"rm", "run"}},
		"a flag":                  {word: "limt", candidates: []string{"limit", "label", "since"}, want: []string{"limit"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, suggest.Closest(tc.word, tc.candidates)); diff != "" {
				t.Errorf("Closest(%q) (-want +got):\n%s", tc.word, diff)
			}
		})
	}
}

func TestDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "abc", 3}, {"retires", "retries", 1}, {"kitten", "sitting", 3}, {"same", "same", 0}} {
		if got := suggest.Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestPhrase(t *testing.T) {
	t.Parallel()
	q := func(s string) string { return "--" + s }
	if got := suggest.Phrase([]string{"limit"}, q); got != "did you mean --limit?" {
		t.Errorf("one: %q", got)
	}
	if got := suggest.Phrase([]string{"a", "b", "c"}, q); got != "did you mean --a, --b or --c?" {
		t.Errorf("three: %q", got)
	}
	if got := suggest.Phrase(nil, q); got != "" {
		t.Errorf("none: %q", got)
	}
}
