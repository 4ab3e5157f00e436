package expr_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kiln.dev/kiln/internal/expr"
)

// knownTasks are the tasks of the workflow the depends tests parse in.
func knownTasks(name string) bool {
	return slices.Contains([]string{"a", "b", "c", "train-x", "prep"}, name)
}

func TestParseDepends(t *testing.T) {
	t.Parallel()

	cases := map[string]struct {
		src       string
		wantTasks []string
	}{
		"a name":                      {src: "a", wantTasks: []string{"a"}},
		"a dashed name":               {src: "train-x", wantTasks: []string{"train-x"}},
		"each result":                 {src: "a.Succeeded || a.Failed || a.Skipped || b.AnySucceeded || c.AllFailed", wantTasks: []string{"a", "b", "c"}},
		"and, or, not and parens":     {src: "a && (b.Failed || !c.Skipped)", wantTasks: []string{"a", "b", "c"}},
		"no spaces":                   {src: "!(a.Failed)&&b||c", wantTasks: []string{"a", "b", "c"}},
		"names once, in order":        {src: "prep && a || prep.Failed && !a.Skipped", wantTasks: []string{"prep", "a"}},
		"several lines":               {src: "a &&\n  (b ||\n   c)", wantTasks: []string{"a", "b", "c"}},
		"double negation, deep nests": {src: "!!((((a))))", wantTasks: []string{"a"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			d, err := expr.ParseDepends(tc.src, knownTasks)
			if err != nil {
				t.Fatalf("ParseDepends(%q): %v", tc.src, err)
			}
			if diff := cmp.Diff(tc.wantTasks, d.Tasks()); diff != "" {
				t.Errorf("Tasks(%q) (-want +got):\n%s", tc.src, diff)
			}
		})
	}
}

func TestParseDependsErrors(t *testing.T) {
	t.Parallel()

	const known = "known results: Succeeded, Failed, Skipped, AnySucceeded, AllFailed"
	cases := map[string]struct {
		src  string
		want *expr.Error // Expr is filled in from src
	}{
		"unknown task": {
			src:  "a && trian",
			want: &expr.Error{Line: 1, Column: 6, Message: `unknown task "trian"`},
		},
		"unknown result": {
			src:  "a.Errored",
			want: &expr.Error{Line: 1, Column: 3, Message: `unknown result "Errored" of task "a"; ` + known},
		},
		"a result in the wrong case": {
			src:  "b || a.succeeded",
			want: &expr.Error{Line: 1, Column: 8, Message: `unknown result "succeeded" of task "a"; ` + known},
		},
		"no result after the dot": {
			src:  "a. && b",
			want: &expr.Error{Line: 1, Column: 4, Message: "expected a result after a., found &&; " + known},
		},
		"empty": {
			src:  "  ",
			want: &expr.Error{Line: 1, Column: 3, Message: "expected a task's name, ! or (, found the end of the expression"},
		},
		"an operator with no right side": {
			src:  "a &&",
			want: &expr.Error{Line: 1, Column: 5, Message: "expected a task's name, ! or (, found the end of the expression"},
		},
		"two operators": {
			src:  "a || && b",
			want: &expr.Error{Line: 1, Column: 6, Message: "expected a task's name, ! or (, found &&"},
		},
		"two names": {
			src:  "a b",
			want: &expr.Error{Line: 1, Column: 3, Message: `expected &&, || or the end of the expression, found "b"`},
		},
		"two names in parens": {
			src:  "(a b)",
			want: &expr.Error{Line: 1, Column: 4, Message: `expected &&, || or ), found "b"`},
		},
		"an unclosed paren": {
			src:  "a && (b || c",
			want: &expr.Error{Line: 1, Column: 6, Message: "this ( is never closed"},
		},
		"a paren too many": {
			src:  "(a))",
			want: &expr.Error{Line: 1, Column: 4, Message: "expected &&, || or the end of the expression, found )"},
		},
		"a single ampersand": {
			src:  "a & b",
			want: &expr.Error{Line: 1, Column: 3, Message: "found a single &; and is written &&, or is written ||"},
		},
		"a character that means nothing": {
			src:  "a == b",
			want: &expr.Error{Line: 1, Column: 3, Message: "unexpected character '='"},
		},
		"a problem on a later line": {
			src:  "a &&\n  b.Done",
			want: &expr.Error{Line: 2, Column: 5, Message: `unknown result "Done" of task "b"; ` + known},
		},
		"too long": {
			src:  strings.Repeat("a && ", 820) + "a",
			want: &expr.Error{Message: "the expression is 4101 bytes long; the most is 4096"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			d, err := expr.ParseDepends(tc.src, knownTasks)
			var got *expr.Error
			if !errors.As(err, &got) {
				t.Fatalf("ParseDepends(%q) = %v, %v; want an *Error", tc.src, d, err)
			}
			want := *tc.want
			want.Expr = tc.src
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("ParseDepends(%q) error (-want +got):\n%s", tc.src, diff)
			}
		})
	}
}

func TestDependsEval(t *testing.T) {
	t.Parallel()

	succeeded := expr.Result{Phase: "Succeeded"}
	failed := expr.Result{Phase: "Failed"}
	skipped := expr.Result{Phase: "Skipped"}
	cancelled := expr.Result{Phase: "Cancelled"}
	cases := map[string]struct {
		src     string
		results map[string]expr.Result
		want    bool
	}{
		"a name is true when it succeeded": {src: "a", results: map[string]expr.Result{"a": succeeded}, want: true},
		"a name is true when it skipped":   {src: "a", results: map[string]expr.Result{"a": skipped}, want: true},
		"a name is false when it failed":   {src: "a", results: map[string]expr.Result{"a": failed}, want: false},
		"a name is false when cancelled":   {src: "a", results: map[string]expr.Result{"a": cancelled}, want: false},
		"Succeeded, true":                  {src: "a.Succeeded", results: map[string]expr.Result{"a": succeeded}, want: true},
		"Succeeded is false when skipped":  {src: "a.Succeeded", results: map[string]expr.Result{"a": skipped}, want: false},
		"Failed, true":                     {src: "a.Failed", results: map[string]expr.Result{"a": failed}, want: true},
		"Failed, false":                    {src: "a.Failed", results: map[string]expr.Result{"a": succeeded}, want: false},
		"Skipped, true":                    {src: "a.Skipped", results: map[string]expr.Result{"a": skipped}, want: true},
		"Skipped, false":                   {src: "a.Skipped", results: map[string]expr.Result{"a": failed}, want: false},
		"AnySucceeded, true": {
			src:     "a.AnySucceeded",
			results: map[string]expr.Result{"a": {Phase: "Failed", AnySucceeded: true}},
			want:    true,
		},
		"AnySucceeded, false":   {src: "a.AnySucceeded", results: map[string]expr.Result{"a": failed}, want: false},
		"AllFailed, true":       {src: "a.AllFailed", results: map[string]expr.Result{"a": {Phase: "Failed", AllFailed: true}}, want: true},
		"AllFailed, false":      {src: "a.AllFailed", results: map[string]expr.Result{"a": failed}, want: false},
		"not":                   {src: "!a.Failed", results: map[string]expr.Result{"a": failed}, want: false},
		"and, both true":        {src: "a && b", results: map[string]expr.Result{"a": succeeded, "b": skipped}, want: true},
		"and, one false":        {src: "a && b", results: map[string]expr.Result{"a": succeeded, "b": failed}, want: false},
		"or, one true":          {src: "a.Failed || b", results: map[string]expr.Result{"a": succeeded, "b": succeeded}, want: true},
		"or, both false":        {src: "a.Failed || b.Failed", results: map[string]expr.Result{"a": succeeded, "b": succeeded}, want: false},
		"and binds tighter":     {src: "a || b && c", results: map[string]expr.Result{"a": succeeded, "b": failed, "c": failed}, want: true},
		"parens group first":    {src: "(a || b) && c", results: map[string]expr.Result{"a": succeeded, "b": failed, "c": failed}, want: false},
		"not binds tighter":     {src: "!a && b", results: map[string]expr.Result{"a": failed, "b": succeeded}, want: true},
		"not of a group":        {src: "!(a && b)", results: map[string]expr.Result{"a": succeeded, "b": succeeded}, want: false},
		"a dashed name":         {src: "train-x.Failed", results: map[string]expr.Result{"train-x": failed}, want: true},
		"the Argo example, one": {src: "a && (b.Failed || c.Skipped)", results: map[string]expr.Result{"a": succeeded, "b": succeeded, "c": skipped}, want: true},
		"the Argo example, two": {src: "a && (b.Failed || c.Skipped)", results: map[string]expr.Result{"a": succeeded, "b": succeeded, "c": succeeded}, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			d, err := expr.ParseDepends(tc.src, knownTasks)
			if err != nil {
				t.Fatalf("ParseDepends(%q): %v", tc.src, err)
			}
			got, err := d.Eval(func(task string) expr.Result {
				r, ok := tc.results[task]
				if !ok {
					t.Errorf("Eval asked for %q, which %q does not name", task, tc.src)
				}
				return r
			})
			if err != nil {
				t.Fatalf("Eval(%q): %v", tc.src, err)
			}
			if got != tc.want {
				t.Errorf("Eval(%q) = %v, want %v", tc.src, got, tc.want)
			}
		})
	}
}

func TestDependsEvalUnfinished(t *testing.T) {
	t.Parallel()

	d, err := expr.ParseDepends("a || b", knownTasks)
	if err != nil {
		t.Fatalf("ParseDepends: %v", err)
	}
	phases := map[string]string{"a": "Succeeded", "b": "Running"}
	got, err := d.Eval(func(task string) expr.Result { return expr.Result{Phase: phases[task]} })
	want := `evaluating "a || b": task "b" has not finished: its phase is "Running"`
	if err == nil || err.Error() != want {
		t.Errorf("Eval = %v, %v; want the error %q", got, err, want)
	}
}
