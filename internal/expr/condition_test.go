package expr_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kiln.dev/kiln/internal/expr"
)

// testEnv is the Env most tests compile in: a workflow with two params and
// four tasks, one with a dashed name.
func testEnv() expr.Env {
	return expr.Env{
		Params: []string{"epochs", "model"},
		Tasks: map[string][]string{
			"eval":    {"accuracy"},
			"flip":    {"side"},
			"prep":    nil,
			"fetch-a": {"rows"},
		},
	}
}

// testData is the data most tests evaluate over.
func testData() expr.Data {
	return expr.Data{
		Params: map[string]string{"epochs": "5", "model": "GPT-small"},
		Tasks: map[string]expr.TaskData{
			"eval":    {Phase: "Succeeded", Outputs: map[string]string{"accuracy": "0.93"}},
			"flip":    {Phase: "Succeeded", Outputs: map[string]string{"side": "heads"}},
			"prep":    {Phase: "Failed"},
			"fetch-a": {Phase: "Skipped"},
		},
	}
}

func TestConditionEval(t *testing.T) {
	t.Parallel()

	cases := map[string]struct {
		src       string
		want      bool
		wantTasks []string
	}{
		"a param by dot":                     {src: `params.model == "GPT-small"`, want: true},
		"a param by index":                   {src: `params["model"] == "other"`, want: false},
		"a param converted to int":           {src: `int(params.epochs) > 3`, want: true},
		"a param converted to int, false":    {src: `int(params.epochs) > 5`, want: false},
		"an int and a double compare":        {src: `int(params.epochs) < 5.5`, want: true},
		"the strings extension":              {src: `params.model.lowerAscii().startsWith("gpt")`, want: true},
		"phase of a succeeded task":          {src: `tasks.eval.phase == "Succeeded"`, want: true, wantTasks: []string{"eval"}},
		"phase of a failed task":             {src: `tasks.prep.phase == "Succeeded"`, want: false, wantTasks: []string{"prep"}},
		"succeeded, true":                    {src: `tasks.eval.succeeded`, want: true, wantTasks: []string{"eval"}},
		"succeeded, false":                   {src: `tasks.prep.succeeded`, want: false, wantTasks: []string{"prep"}},
		"failed, true":                       {src: `tasks.prep.failed`, want: true, wantTasks: []string{"prep"}},
		"failed, false":                      {src: `tasks.eval.failed`, want: false, wantTasks: []string{"eval"}},
		"skipped, true":                      {src: `tasks["fetch-a"].skipped`, want: true, wantTasks: []string{"fetch-a"}},
		"skipped, false":                     {src: `tasks.prep.skipped`, want: false, wantTasks: []string{"prep"}},
		"an output compared as a string":     {src: `tasks.flip.outputs.parameters.side == "heads"`, want: true, wantTasks: []string{"flip"}},
		"an output by index":                 {src: `tasks.flip.outputs.parameters["side"] == "tails"`, want: false, wantTasks: []string{"flip"}},
		"an output converted to double":      {src: `double(tasks.eval.outputs.parameters.accuracy) > 0.9`, want: true, wantTasks: []string{"eval"}},
		"an output converted to double, low": {src: `double(tasks.eval.outputs.parameters.accuracy) > 0.95`, want: false, wantTasks: []string{"eval"}},
		"has on a declared output":           {src: `has(tasks.flip.outputs.parameters.side)`, want: true, wantTasks: []string{"flip"}},
		"a dashed task's output":             {src: `tasks["fetch-a"].skipped || tasks["fetch-a"].outputs.parameters.rows == "0"`, want: true, wantTasks: []string{"fetch-a"}},
		"tasks in order of appearance, once": {
			src:       `tasks.prep.failed && tasks.eval.succeeded && !tasks.prep.skipped`,
			want:      true,
			wantTasks: []string{"prep", "eval"},
		},
		"a comprehension variable hides params": {src: `[1, 2].exists(params, params == 2)`, want: true},
		"a comprehension variable named item":   {src: `["a"].all(item, item == "a")`, want: true},
		"short-circuit skips a missing output":  {src: `tasks.prep.succeeded && tasks.prep.outputs.parameters.x == "1"`, want: false, wantTasks: []string{"prep"}},
	}
	env := testEnv()
	env.Tasks["prep"] = []string{"x"}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			c, err := expr.CompileCondition(tc.src, env)
			if err != nil {
				t.Fatalf("CompileCondition(%q): %v", tc.src, err)
			}
			got, err := c.Eval(testData())
			if err != nil {
				t.Fatalf("Eval(%q): %v", tc.src, err)
			}
			if got != tc.want {
				t.Errorf("Eval(%q) = %v, want %v", tc.src, got, tc.want)
			}
			if diff := cmp.Diff(tc.wantTasks, c.Tasks()); diff != "" {
				t.Errorf("Tasks(%q) (-want +got):\n%s", tc.src, diff)
			}
		})
	}
}

func TestConditionEvalItem(t *testing.T) {
	t.Parallel()

	item := map[string]any{
		"lr":    0.01,
		"name":  "small",
		"tags":  []any{"fast", "cheap"},
		"on":    true,
		"count": 3.0,
	}
	cases := map[string]struct {
		src   string
		item  any
		index int
		want  bool
	}{
		"a double field":               {src: `item.lr < 0.1`, item: item, want: true},
		"a string field":               {src: `item.name == "large"`, item: item, want: false},
		"a bool field":                 {src: `item.on`, item: item, want: true},
		"a JSON number equals an int":  {src: `item.count == 3`, item: item, want: true},
		"a list field":                 {src: `item.tags.exists(t, t == "cheap")`, item: item, want: true},
		"has on a missing field":       {src: `has(item.gpu)`, item: item, want: false},
		"a string item":                {src: `item == "b"`, item: "b", want: true},
		"a list item":                  {src: `item[1] > 2`, item: []any{1.0, 3.0}, want: true},
		"a bool item":                  {src: `item`, item: false, want: false},
		"the index":                    {src: `itemIndex == 2`, index: 2, want: true},
		"the index, false":             {src: `itemIndex % 2 == 1`, index: 2, want: false},
		"item beside params and tasks": {src: `item.name == params.model && tasks.eval.succeeded`, item: map[string]any{"name": "GPT-small"}, want: true},
	}
	env := testEnv()
	env.Item = true
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			c, err := expr.CompileCondition(tc.src, env)
			if err != nil {
				t.Fatalf("CompileCondition(%q): %v", tc.src, err)
			}
			d := testData()
			d.Item, d.ItemIndex = tc.item, tc.index
			got, err := c.Eval(d)
			if err != nil {
				t.Fatalf("Eval(%q): %v", tc.src, err)
			}
			if got != tc.want {
				t.Errorf("Eval(%q) = %v, want %v", tc.src, got, tc.want)
			}
		})
	}
}

func TestCompileConditionErrors(t *testing.T) {
	t.Parallel()

	cases := map[string]struct {
		src  string
		want *expr.Error // Expr is filled in from src
	}{
		"does not parse": {
			src:  `tasks.eval.succeeded &&`,
			want: &expr.Error{Line: 1, Column: 24, Message: "mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"},
		},
		"an unclosed parenthesis": {
			src:  `(tasks.eval.succeeded`,
			want: &expr.Error{Line: 1, Column: 22, Message: "missing ')' at '<EOF>'"},
		},
		"a single equals sign": {
			src:  `params.model = "x"`,
			want: &expr.Error{Line: 1, Column: 14, Message: "token recognition error at: '= '"},
		},
		"not a boolean": {
			src:  `tasks.flip.outputs.parameters.side`,
			want: &expr.Error{Message: "a condition must be a boolean; this one is of type string"},
		},
		"an int": {
			src:  `1 + 2`,
			want: &expr.Error{Message: "a condition must be a boolean; this one is of type int"},
		},
		"a phase compared with a number": {
			src:  `tasks.eval.phase > 3`,
			want: &expr.Error{Line: 1, Column: 18, Message: "found no matching overload for '_>_' applied to '(string, int)'"},
		},
		"an output compared with a number, unconverted": {
			src:  `tasks.eval.outputs.parameters.accuracy > 0.9`,
			want: &expr.Error{Line: 1, Column: 40, Message: "found no matching overload for '_>_' applied to '(string, double)'"},
		},
		"a task compared with a number": {
			src:  `tasks.eval > 3`,
			want: &expr.Error{Line: 1, Column: 12, Message: "found no matching overload for '_>_' applied to '(kiln.Task, int)'"},
		},
		"unknown param": {
			src:  `params.epoch == "3"`,
			want: &expr.Error{Line: 1, Column: 8, Message: `unknown param "epoch"; known params: epochs, model`},
		},
		"unknown param by index": {
			src:  `params["lr"] == "3"`,
			want: &expr.Error{Line: 1, Column: 8, Message: `unknown param "lr"; known params: epochs, model`},
		},
		"unknown task": {
			src:  `tasks.evl.succeeded`,
			want: &expr.Error{Line: 1, Column: 7, Message: `unknown task "evl"; known tasks: eval, fetch-a, flip, prep`},
		},
		"a dashed task name written with a dot": {
			src:  `tasks.fetch-a.succeeded`,
			want: &expr.Error{Line: 1, Column: 7, Message: `unknown task "fetch"; known tasks: eval, fetch-a, flip, prep; a name with dashes is written tasks["fetch-a"]`},
		},
		"unknown output parameter": {
			src:  `tasks.flip.outputs.parameters.sides == "x"`,
			want: &expr.Error{Line: 1, Column: 31, Message: `task "flip" has no output parameter "sides"; known output parameters: side`},
		},
		"an output of a task that declares none": {
			src:  `tasks.prep.outputs.parameters["x"] == "1"`,
			want: &expr.Error{Line: 1, Column: 31, Message: `task "prep" has no output parameter "x"; it declares none`},
		},
		"unknown field of a task": {
			src:  `tasks.eval.status == "ok"`,
			want: &expr.Error{Line: 1, Column: 12, Message: `a task has no field "status"; its fields are phase, succeeded, failed, skipped, outputs`},
		},
		"unknown field of outputs": {
			src:  `tasks.eval.outputs.artifacts.model == "x"`,
			want: &expr.Error{Line: 1, Column: 20, Message: `outputs has no field "artifacts"; output parameters are read as outputs.parameters.name`},
		},
		"a task key that is not literal": {
			src:  `tasks[params.model].succeeded`,
			want: &expr.Error{Line: 1, Column: 7, Message: `a key of params, tasks or outputs.parameters must be a literal string, as in tasks["name"]`},
		},
		"a param key that is not literal": {
			src:  `params["ep" + "ochs"] == "1"`,
			want: &expr.Error{Line: 1, Column: 8, Message: `a key of params, tasks or outputs.parameters must be a literal string, as in tasks["name"]`},
		},
		"an output key that is not literal": {
			src:  `tasks.flip.outputs.parameters[params.model] == "x"`,
			want: &expr.Error{Line: 1, Column: 31, Message: `a key of params, tasks or outputs.parameters must be a literal string, as in tasks["name"]`},
		},
		"params on its own": {
			src:  `"epochs" in params`,
			want: &expr.Error{Line: 1, Column: 13, Message: `params must be followed by a param's name, as in params.name or params["name"]`},
		},
		"tasks on its own": {
			src:  `size(tasks) > 0`,
			want: &expr.Error{Line: 1, Column: 6, Message: `tasks must be followed by a task's name, as in tasks.name or tasks["name"]`},
		},
		"outputs.parameters on its own": {
			src:  `size(tasks.flip.outputs.parameters) == 1`,
			want: &expr.Error{Line: 1, Column: 25, Message: "outputs.parameters must be followed by a parameter's name, as in outputs.parameters.name"},
		},
		"item outside a map task": {
			src:  `item == "a"`,
			want: &expr.Error{Line: 1, Column: 1, Message: "item is defined only in the children of a map task"},
		},
		"itemIndex outside a map task": {
			src:  `itemIndex > 0`,
			want: &expr.Error{Line: 1, Column: 1, Message: "itemIndex is defined only in the children of a map task"},
		},
		"an unknown name": {
			src:  `epochs > 3`,
			want: &expr.Error{Line: 1, Column: 1, Message: `unknown name "epochs"; a condition reads params, tasks, item, itemIndex and (in onExit tasks) workflow`},
		},
		"a problem on the second line": {
			src:  "tasks.eval.succeeded &&\n  params.lr == \"1\"",
			want: &expr.Error{Line: 2, Column: 10, Message: `unknown param "lr"; known params: epochs, model`},
		},
		"columns count characters, not bytes": {
			src:  `"é" == "é" && params.x == ""`,
			want: &expr.Error{Line: 1, Column: 22, Message: `unknown param "x"; known params: epochs, model`},
		},
		"too long": {
			src:  strings.Repeat("true && ", 512) + "true",
			want: &expr.Error{Message: "the expression is 4100 bytes long; the most is 4096"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			c, err := expr.CompileCondition(tc.src, testEnv())
			var got *expr.Error
			if !errors.As(err, &got) {
				t.Fatalf("CompileCondition(%q) = %v, %v; want an *Error", tc.src, c, err)
			}
			want := *tc.want
			want.Expr = tc.src
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("CompileCondition(%q) error (-want +got):\n%s", tc.src, diff)
			}
		})
	}
}

func TestConditionEvalErrors(t *testing.T) {
	t.Parallel()

	// nested visits every element of ten nested lists of ten: 10^levels
	// iterations.
	nested := func(levels int) string {
		list := "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]"
		src := "true"
		for i := range levels {
			src = list + ".all(v" + string(rune('a'+i)) + ", " + src + ")"
		}
		return src
	}
	cases := map[string]struct {
		src     string
		data    func(*expr.Data)
		wantErr string
	}{
		"a conversion that fails": {
			src:     `double("abc") > 1.0`,
			wantErr: `evaluating "double(\"abc\") > 1.0": type conversion error from 'string' to 'double'`,
		},
		"an output that is not a number": {
			src:     `double(tasks.flip.outputs.parameters.side) > 0.5`,
			wantErr: `evaluating "double(tasks.flip.outputs.parameters.side) > 0.5": type conversion error from 'string' to 'double'`,
		},
		"an output the task did not write": {
			src:     `tasks.prep.outputs.parameters.x == "1"`,
			wantErr: `evaluating "tasks.prep.outputs.parameters.x == \"1\"": no such key: x`,
		},
		"no result for a task": {
			src:     `tasks.eval.succeeded`,
			data:    func(d *expr.Data) { delete(d.Tasks, "eval") },
			wantErr: `evaluating "tasks.eval.succeeded": no result for task "eval"`,
		},
		"no value for a param": {
			src:     `params.epochs == "1"`,
			data:    func(d *expr.Data) { d.Params = nil },
			wantErr: `evaluating "params.epochs == \"1\"": no value for param "epochs"`,
		},
		"an item that is not a boolean": {
			src:     `item`,
			data:    func(d *expr.Data) { d.Item = "yes" },
			wantErr: `evaluating "item": the result is a string, not a boolean`,
		},
		"over the cost limit": {
			src:     nested(6),
			wantErr: "actual cost limit exceeded",
		},
	}
	env := testEnv()
	env.Tasks["prep"] = []string{"x"}
	env.Item = true
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			c, err := expr.CompileCondition(tc.src, env)
			if err != nil {
				t.Fatalf("CompileCondition(%q): %v", tc.src, err)
			}
			d := testData()
			if tc.data != nil {
				tc.data(&d)
			}
			got, err := c.Eval(d)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Eval(%.40q) = %v, %v; want an error containing %q", tc.src, got, err, tc.wantErr)
			}
		})
	}

	t.Run("under the cost limit", func(t *testing.T) {
		t.Parallel()

		// A tenth of the iterations of the case above: the limit, not the
		// shape of the expression, is what stops that one.
		c, err := expr.CompileCondition(nested(5), env)
		if err != nil {
			t.Fatalf("CompileCondition: %v", err)
		}
		if got, err := c.Eval(testData()); err != nil || !got {
			t.Errorf("Eval = %v, %v; want true, nil", got, err)
		}
	})
}

func TestConditionConcurrentEval(t *testing.T) {
	t.Parallel()

	c, err := expr.CompileCondition(`tasks.eval.succeeded && int(params.epochs) > itemIndex`, expr.Env{
		Params: []string{"epochs"},
		Tasks:  map[string][]string{"eval": nil},
		Item:   true,
	})
	if err != nil {
		t.Fatalf("CompileCondition: %v", err)
	}
	var wg sync.WaitGroup
	got := make([]bool, 8)
	for i := range got {
		wg.Go(func() {
			for range 50 {
				b, err := c.Eval(expr.Data{
					Params:    map[string]string{"epochs": "4"},
					Tasks:     map[string]expr.TaskData{"eval": {Phase: "Succeeded"}},
					ItemIndex: i,
				})
				if err != nil {
					t.Errorf("Eval: %v", err)
					return
				}
				got[i] = b
			}
		})
	}
	wg.Wait()
	want := []bool{true, true, true, true, false, false, false, false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results by item index (-want +got):\n%s", diff)
	}
}

func TestErrorString(t *testing.T) {
	t.Parallel()

	cases := map[string]struct {
		err  expr.Error
		want string
	}{
		"one line":        {err: expr.Error{Line: 1, Column: 7, Message: "m"}, want: "column 7: m"},
		"a later line":    {err: expr.Error{Line: 3, Column: 2, Message: "m"}, want: "line 3, column 2: m"},
		"no place at all": {err: expr.Error{Message: "m"}, want: "m"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
}

func BenchmarkConditionEval(b *testing.B) {
	c, err := expr.CompileCondition(
		`tasks.eval.succeeded && double(tasks.eval.outputs.parameters.accuracy) > 0.9 && int(params.epochs) > 3`, testEnv())
	if err != nil {
		b.Fatalf("CompileCondition: %v", err)
	}
	d := testData()
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := c.Eval(d); err != nil || !ok {
			b.Fatalf("Eval = %v, %v", ok, err)
		}
	}
}

func BenchmarkCompileCondition(b *testing.B) {
	env := testEnv()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := expr.CompileCondition(`tasks.eval.succeeded && int(params.epochs) > 3`, env); err != nil {
			b.Fatalf("CompileCondition: %v", err)
		}
	}
}
