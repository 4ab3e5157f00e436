package mapper_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/node/mapper"
	"kiln.dev/kiln/internal/node/nodetest"
	"kiln.dev/kiln/internal/workflow"
)

// mapTask compiles a map task whose forEach is forEach, with the param
// list declared for forEach.from to read.
func mapTask(t *testing.T, forEach string) *workflow.Task {
	t.Helper()
	return nodetest.Compile(t, `spec:
  params: [{name: list}]
  tasks:
  - name: m
    command: [echo, "{{item}}"]
    forEach: `+forEach+`
    outputs: {parameters: [{name: score}, {name: note}]}
`)
}

// compact is items with each item's JSON compacted, to compare them.
func compact(t *testing.T, items []json.RawMessage) []string {
	t.Helper()
	out := make([]string, len(items))
	for i, it := range items {
		var v any
		if err := json.Unmarshal(it, &v); err != nil {
			t.Fatalf("item %d %q is not JSON: %v", i, it, err)
		}
		b, _ := json.Marshal(v)
		out[i] = string(b)
	}
	return out
}

func TestKind(t *testing.T) {
	t.Parallel()
	if got := mapper.New().Kind(); got != apiv1.NodeKindMap {
		t.Errorf("Kind() = %q, want %q", got, apiv1.NodeKindMap)
	}
	if mapper.New().RunsFirst(mapTask(t, "{items: [1]}")) {
		t.Error("a map runs an attempt of its own before its items")
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()

	cases := map[string]struct {
		forEach         string
		list            string // the param forEach.from reads
		recorded        json.RawMessage
		wantItems       []string
		wantMaxParallel int
	}{
		"literal items": {
			forEach:         `{items: [a, 2, {x: 1}], maxParallel: 2}`,
			wantItems:       []string{`"a"`, `2`, `{"x":1}`},
			wantMaxParallel: 2,
		},
		"a range's numbers": {
			forEach:   `{range: {start: 2, count: 3, step: 2}}`,
			wantItems: []string{`2`, `4`, `6`},
		},
		"a list read from a template": {
			forEach:   `{from: "{{params.list}}"}`,
			list:      `["x", {"y": [1, 2]}, null]`,
			wantItems: []string{`"x"`, `{"y":[1,2]}`, `null`},
		},
		"an empty list from a template": {
			forEach:   `{from: "{{params.list}}"}`,
			list:      ` [] `,
			wantItems: []string{},
		},
		"recorded items, not what the template gives now": {
			forEach:   `{from: "{{params.list}}", maxParallel: 1}`,
			list:      `["now"]`,
			recorded:  json.RawMessage(`["then", "and", "before"]`),
			wantItems: []string{`"then"`, `"and"`, `"before"`}, wantMaxParallel: 1,
		},
		"recorded items, not the literal ones": {
			forEach:   `{items: [a, b]}`,
			recorded:  json.RawMessage(`[1]`),
			wantItems: []string{`1`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			task := mapTask(t, tc.forEach)
			x := &node.Expansion{
				Task:     task,
				Inputs:   &nodetest.Inputs{Params: map[string]string{"list": tc.list}},
				Recorded: tc.recorded,
			}
			ch, err := mapper.New().Expand(t.Context(), x)
			if err != nil {
				t.Fatalf("Expand: %v", err)
			}
			if diff := cmp.Diff(tc.wantItems, compact(t, ch.Items)); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			n := len(tc.wantItems)
			wantIndex := map[string]int{}
			for i := range n {
				wantIndex[strconv.Itoa(i)] = i
			}
			if diff := cmp.Diff(wantIndex, ch.Plan.Index); diff != "" {
				t.Errorf("children's names (-want +got):\n%s", diff)
			}
			if len(ch.Plan.Tasks) != n || ch.Plan.Graph == nil || ch.Plan.Graph.Len() != n {
				t.Fatalf("plan has %d tasks and graph %v, want %d of each", len(ch.Plan.Tasks), ch.Plan.Graph, n)
			}
			for i, c := range ch.Plan.Tasks {
				if c.Kind != apiv1.NodeKindCommand || c.Spec != task.Spec || c.Map != nil {
					t.Errorf("child %d is %+v, want the map's own task as a command", i, c)
				}
				if up := ch.Plan.Graph.Upstream(i); len(up) != 0 {
					t.Errorf("child %d waits on %v; items do not wait on each other", i, up)
				}
			}
			if ch.MaxParallel != tc.wantMaxParallel || ch.Local || ch.Params != nil {
				t.Errorf("MaxParallel, Local, Params = %d, %v, %v; want %d, false, nil (items read the map's scope)",
					ch.MaxParallel, ch.Local, ch.Params, tc.wantMaxParallel)
			}
			// The record rebuilds the same items, whatever the template gives then.
			again, err := mapper.New().Expand(t.Context(), &node.Expansion{
				Task: task, Inputs: &nodetest.Inputs{Params: map[string]string{"list": `["changed"]`}}, Recorded: ch.Record,
			})
			if err != nil {
				t.Fatalf("Expand from the record: %v", err)
			}
			if diff := cmp.Diff(compact(t, ch.Items), compact(t, again.Items)); diff != "" {
				t.Errorf("items rebuilt from the record (-first +again):\n%s", diff)
			}
		})
	}
}

func TestExpandRefusesWhatIsNotAList(t *testing.T) {
	t.Parallel()

	long := `{"text": "` + strings.Repeat("a", 50) + `", "rest": "` + strings.Repeat("z", 100) + `"}`
	tooMany := "[" + strings.TrimSuffix(strings.Repeat("0,", workflow.MaxItems+1), ",") + "]"
	cases := map[string]struct {
		list        string
		wantCode    apiv1.Code
		wantSays    []string
		wantNotSays string
	}{
		"an object": {
			list: `{"a": 1}`, wantCode: apiv1.CodeNotAList,
			wantSays: []string{`{{params.list}} is "{\"a\": 1}", not a JSON list`},
		},
		"null": {
			list: "null", wantCode: apiv1.CodeNotAList,
			wantSays: []string{`is "null", not a JSON list`},
		},
		"plain text": {
			list: "a, b, c", wantCode: apiv1.CodeNotAList,
			wantSays: []string{`is "a, b, c", not a JSON list`},
		},
		"an empty value": {
			list: "", wantCode: apiv1.CodeNotAList,
			wantSays: []string{`is "", not a JSON list`},
		},
		"a long value is quoted by its first 64 bytes": {
			list: long, wantCode: apiv1.CodeNotAList,
			wantSays:    []string{strconv.Quote(long[:64]) + " (first 64 bytes), not a JSON list"},
			wantNotSays: "z",
		},
		"one item more than a map runs": {
			list: tooMany, wantCode: apiv1.CodeOutOfRange,
			wantSays: []string{fmt.Sprintf("holds %d items", workflow.MaxItems+1), fmt.Sprintf("at most %d", workflow.MaxItems)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			x := &node.Expansion{Task: mapTask(t, `{from: "{{params.list}}"}`), Inputs: &nodetest.Inputs{Params: map[string]string{"list": tc.list}}}
			ch, err := mapper.New().Expand(t.Context(), x)
			if ch != nil {
				t.Errorf("Expand gave %d children with its error", len(ch.Plan.Tasks))
			}
			errs := apiv1.Errors(err)
			if len(errs) != 1 || errs[0].Code != tc.wantCode || errs[0].Field != "forEach.from" {
				t.Fatalf("Expand = %v; want one %s at forEach.from", err, tc.wantCode)
			}
			for _, s := range tc.wantSays {
				if !strings.Contains(errs[0].Message, s) {
					t.Errorf("message %q does not say %q", errs[0].Message, s)
				}
			}
			if tc.wantNotSays != "" && strings.Contains(errs[0].Message, tc.wantNotSays) {
				t.Errorf("message %q quotes more than the first 64 bytes", errs[0].Message)
			}
		})
	}
}

// child is a child's status: name, phase and outputs (k=v pairs).
func child(name string, phase apiv1.Phase, outputs ...string) *apiv1.NodeStatus {
	st := &apiv1.NodeStatus{Name: name, Phase: phase}
	for _, kv := range outputs {
		k, v, _ := strings.Cut(kv, "=")
		if st.Outputs == nil {
			st.Outputs = map[string]string{}
		}
		st.Outputs[k] = v
	}
	if phase == apiv1.PhaseFailed {
		st.Message = "boom in " + name
	}
	return st
}

// group counts children into a node.Group.
func group(children ...*apiv1.NodeStatus) *node.Group {
	g := &node.Group{Children: children}
	g.Counts.Total = len(children)
	for _, c := range children {
		switch c.Phase {
		case apiv1.PhasePending:
			g.Counts.Pending++
		case apiv1.PhaseRunning:
			g.Counts.Running++
		case apiv1.PhaseSucceeded:
			g.Counts.Succeeded++
		case apiv1.PhaseFailed:
			g.Counts.Failed++
		case apiv1.PhaseSkipped:
			g.Counts.Skipped++
		case apiv1.PhaseCancelled:
			g.Counts.Cancelled++
		}
	}
	return g
}

func TestGather(t *testing.T) {
	t.Parallel()

	ok, failed, running, pending := apiv1.PhaseSucceeded, apiv1.PhaseFailed, apiv1.PhaseRunning, apiv1.PhasePending
	cases := map[string]struct {
		forEach     string
		children    []*apiv1.NodeStatus
		want        node.Verdict
		wantDecided bool
		wantSays    string // in a failure's message
	}{
		"all succeeded: outputs gathered in item order, null where missing": {
			forEach: `{items: [a, b, c]}`,
			children: []*apiv1.NodeStatus{
				child("0", ok, "score=1", "note=x"), child("1", ok, "note=y"), child("2", ok, "score=3", `note="q"`),
			},
			want: node.Verdict{Phase: ok, Outputs: map[string]string{
				"score": `["1",null,"3"]`, "note": `["x","y","\"q\""]`,
			}},
			wantDecided: true,
		},
		"no items succeed at once": {
			forEach:     `{from: "{{params.list}}"}`,
			want:        node.Verdict{Phase: ok, Outputs: map[string]string{"score": "[]", "note": "[]"}},
			wantDecided: true,
		},
		"one failure fails a map that needs all, before the others end": {
			forEach:     `{items: [a, b, c]}`,
			children:    []*apiv1.NodeStatus{child("0", running), child("1", failed), child("2", pending)},
			want:        node.Verdict{Phase: failed, Code: apiv1.CodeTooFewSucceeded},
			wantDecided: true,
			wantSays:    "1 of 3 items did not succeed (1 failed); 3 must (first failure: 1: boom in 1)",
		},
		"minSuccesses met": {
			forEach:     `{items: [a, b, c], minSuccesses: 2}`,
			children:    []*apiv1.NodeStatus{child("0", ok, "score=1"), child("1", failed), child("2", ok, "score=3")},
			want:        node.Verdict{Phase: ok, Outputs: map[string]string{"score": `["1",null,"3"]`, "note": "[null,null,null]"}},
			wantDecided: true,
		},
		"minSuccesses not met": {
			forEach:     `{items: [a, b, c], minSuccesses: 2}`,
			children:    []*apiv1.NodeStatus{child("0", failed), child("1", ok), child("2", apiv1.PhaseSkipped)},
			want:        node.Verdict{Phase: failed, Code: apiv1.CodeTooFewSucceeded},
			wantDecided: true,
			wantSays:    "2 of 3 items did not succeed (1 failed, 1 skipped); 2 must (first failure: 0: boom in 0)",
		},
		"minSuccesses still possible: not decided": {
			forEach:  `{items: [a, b, c], minSuccesses: 2}`,
			children: []*apiv1.NodeStatus{child("0", failed), child("1", running), child("2", pending)},
		},
		"minSuccesses hopeless before all ended: decided": {
			forEach:     `{items: [a, b, c, d], minSuccesses: 3}`,
			children:    []*apiv1.NodeStatus{child("0", apiv1.PhaseCancelled), child("1", running), child("2", failed), child("3", pending)},
			want:        node.Verdict{Phase: failed, Code: apiv1.CodeTooFewSucceeded},
			wantDecided: true,
			wantSays:    "2 of 4 items did not succeed (1 failed, 1 cancelled); 3 must (first failure: 2: boom in 2)",
		},
		"minSuccessRatio met": {
			forEach:     `{items: [a, b, c, d], minSuccessRatio: 0.5}`,
			children:    []*apiv1.NodeStatus{child("0", failed), child("1", ok, "score=s"), child("2", failed), child("3", ok)},
			want:        node.Verdict{Phase: ok, Outputs: map[string]string{"score": `[null,"s",null,null]`, "note": "[null,null,null,null]"}},
			wantDecided: true,
		},
		"minSuccessRatio rounds up: 0.5 of 3 needs 2": {
			forEach:     `{items: [a, b, c], minSuccessRatio: 0.5}`,
			children:    []*apiv1.NodeStatus{child("0", failed), child("1", ok), child("2", failed)},
			want:        node.Verdict{Phase: failed, Code: apiv1.CodeTooFewSucceeded},
			wantDecided: true,
			wantSays:    "2 of 3 items did not succeed (2 failed); 2 must",
		},
		"minSuccessRatio still possible: not decided": {
			forEach:  `{items: [a, b, c, d], minSuccessRatio: 0.5}`,
			children: []*apiv1.NodeStatus{child("0", failed), child("1", failed), child("2", running), child("3", running)},
		},
		"all succeeded so far, some running: not decided": {
			forEach:  `{items: [a, b]}`,
			children: []*apiv1.NodeStatus{child("0", ok, "score=1"), child("1", running)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, decided := mapper.New().Gather(mapTask(t, tc.forEach), group(tc.children...))
			if decided != tc.wantDecided {
				t.Fatalf("decided = %v, want %v (verdict %+v)", decided, tc.wantDecided, got)
			}
			if !strings.Contains(got.Message, tc.wantSays) {
				t.Errorf("message %q does not say %q", got.Message, tc.wantSays)
			}
			got.Message = ""
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGatherArtifacts: a map's output artifact is the JSON list of its
// items' paths, in item order, null for an item that did not succeed.
func TestGatherArtifacts(t *testing.T) {
	t.Parallel()
	task := nodetest.Compile(t, `spec:
  tasks:
  - name: m
    command: [echo, "{{item}}"]
    forEach: {items: [a, b, c], minSuccesses: 2}
    outputs: {artifacts: [{name: part, path: part.txt}]}
`)
	g := group(child("0", apiv1.PhaseSucceeded), child("1", apiv1.PhaseFailed), child("2", apiv1.PhaseSucceeded))
	g.Artifact = func(k int, name string) (string, bool) {
		if k == 1 {
			t.Errorf("asked for the path of item 1, which failed")
		}
		return fmt.Sprintf("/out/m.%d/%s", k, name), true
	}
	got, decided := mapper.New().Gather(task, g)
	if want := `["/out/m.0/part",null,"/out/m.2/part"]`; !decided || got.Phase != apiv1.PhaseSucceeded || got.Outputs["part"] != want {
		t.Errorf("gathered %v %s %v, want Succeeded with part = %s", decided, got.Phase, got.Outputs, want)
	}
}
