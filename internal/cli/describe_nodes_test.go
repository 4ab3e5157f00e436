package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/sqlite"
)

// node is a node of a constructed run, without times, so that its
// durations print as "-".
func node(name string, phase apiv1.Phase, kind apiv1.NodeKind, parent string) apiv1.NodeStatus {
	return apiv1.NodeStatus{Name: name, Phase: phase, Kind: kind, Parent: parent}
}

// groupNode is node with its children counted.
func groupNode(name string, phase apiv1.Phase, kind apiv1.NodeKind, parent string, c apiv1.ChildCounts) apiv1.NodeStatus {
	n := node(name, phase, kind, parent)
	n.Children = &c
	return n
}

// bigMap is a map "many" of total items, then a command "after": items
// whose index is in odd have that phase, the rest succeeded.
func bigMap(total int, odd map[int]apiv1.Phase) []apiv1.NodeStatus {
	c := apiv1.ChildCounts{Total: total}
	var kids []apiv1.NodeStatus
	for i := range total {
		ph := apiv1.PhaseSucceeded
		if p, ok := odd[i]; ok {
			ph = p
		}
		switch ph {
		case apiv1.PhaseSucceeded:
			c.Succeeded++
		case apiv1.PhaseFailed:
			c.Failed++
		case apiv1.PhaseRunning:
			c.Running++
		case apiv1.PhasePending:
			c.Pending++
		}
		kids = append(kids, node(fmt.Sprintf("many.%d", i), ph, apiv1.NodeKindCommand, "many"))
	}
	top := []apiv1.NodeStatus{groupNode("many", apiv1.PhaseRunning, apiv1.NodeKindMap, "", c), node("after", apiv1.PhasePending, apiv1.NodeKindCommand, "")}
	return append(top, kids...)
}

// tasksSection is the lines of describe's output from "Tasks:" up to
// "Events:", both left out.
func tasksSection(t *testing.T, out string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "Tasks:\n")
	tasks, _, ok2 := strings.Cut(rest, "Events:\n")
	if !ok || !ok2 {
		t.Fatalf("no Tasks: ... Events: in\n%s", out)
	}
	return tasks
}

func describeText(r *apiv1.Run, allChildren bool) string {
	var b bytes.Buffer
	writeDescription(&b, r, nil, nil, allChildren)
	return b.String()
}

func TestDescribeDrawsChildrenUnderTheirParents(t *testing.T) {
	t.Parallel()
	exit1 := 1
	failed := node("each.1", apiv1.PhaseFailed, apiv1.NodeKindCommand, "each")
	failed.Code, failed.Message = apiv1.CodeExit, "the process exited with code 1"
	failed.Attempts = []apiv1.AttemptStatus{{Number: 1, Phase: apiv1.PhaseFailed, ExitCode: &exit1, Code: apiv1.CodeExit, Message: "the process exited with code 1"}}
	each := groupNode("each", apiv1.PhaseFailed, apiv1.NodeKindMap, "", apiv1.ChildCounts{Total: 3, Succeeded: 1, Failed: 1, Skipped: 1})
	each.Code, each.Message = apiv1.CodeTooFewSucceeded, "2 of 3 items did not succeed (1 failed, 1 skipped); 3 must"
	gen := groupNode("gen", apiv1.PhaseRunning, apiv1.NodeKindDynamic, "", apiv1.ChildCounts{Total: 2, Succeeded: 1, Running: 1})
	gen.Message = "2 children"
	r := &apiv1.Run{ID: "tree-1", Name: "tree", Status: apiv1.RunStatus{Phase: apiv1.PhaseFailing, Nodes: []apiv1.NodeStatus{
		each,
		gen,
		node("report", apiv1.PhasePending, apiv1.NodeKindCommand, ""),
		groupNode("onExit", apiv1.PhaseRunning, apiv1.NodeKindExit, "", apiv1.ChildCounts{Total: 1, Running: 1}),
		node("each.0", apiv1.PhaseSucceeded, apiv1.NodeKindCommand, "each"),
		failed,
		node("each.2", apiv1.PhaseSkipped, apiv1.NodeKindCommand, "each"),
		node("gen.first", apiv1.PhaseSucceeded, apiv1.NodeKindCommand, "gen"),
		groupNode("gen.sub", apiv1.PhaseRunning, apiv1.NodeKindSubworkflow, "gen", apiv1.ChildCounts{Total: 1, Running: 1}),
		node("onExit.notify", apiv1.PhaseRunning, apiv1.NodeKindCommand, "onExit"),
		node("gen.sub.train", apiv1.PhaseRunning, apiv1.NodeKindCommand, "gen.sub"),
		node("lost.0", apiv1.PhaseSucceeded, apiv1.NodeKindCommand, "lost"),
	}}}

	want := `  TASK               PHASE      ATTEMPT  EXIT  DURATION  CODE      MESSAGE
  each               Failed                    -         KLN-3017  1/3 succeeded, 1 failed, 1 skipped; 2 of 3 items did not succeed (1 failed, 1 skipped); 3 must
    each.0           Succeeded                 -
    each.1           Failed                    -         KLN-3002  the process exited with code 1
                     Failed     #1       1     -         KLN-3002  the process exited with code 1
    each.2           Skipped                   -
  gen                Running                   -                   1/2 succeeded, 1 running
    gen.first        Succeeded                 -
    gen.sub          Running                   -                   0/1 succeeded, 1 running
      gen.sub.train  Running                   -
  report             Pending                   -
  onExit             Running                   -                   0/1 succeeded, 1 running
    onExit.notify    Running                   -
  lost.0             Succeeded                 -
`
	if diff := cmp.Diff(want, tasksSection(t, describeText(r, false))); diff != "" {
		t.Errorf("the Tasks table (-want +got):\n%s", diff)
	}
}

func TestDescribeFoldsTheChildrenOfALargeGroup(t *testing.T) {
	t.Parallel()
	r := &apiv1.Run{ID: "big-1", Name: "big", Status: apiv1.RunStatus{Phase: apiv1.PhaseRunning, Nodes: bigMap(200, map[int]apiv1.Phase{
		3: apiv1.PhaseFailed, 77: apiv1.PhaseFailed, 150: apiv1.PhaseRunning, 197: apiv1.PhasePending, 198: apiv1.PhasePending, 199: apiv1.PhasePending,
	})}}

	want := `  TASK        PHASE    ATTEMPT  EXIT  DURATION  CODE  MESSAGE
  many        Running                 -               194/200 succeeded, 2 failed, 1 running, 3 pending
    many.3    Failed                  -
    many.77   Failed                  -
    many.150  Running                 -
    … 197 more: 194 succeeded, 3 pending; kiln describe run big-1 --children lists all
  after       Pending                 -
`
	if diff := cmp.Diff(want, tasksSection(t, describeText(r, false))); diff != "" {
		t.Errorf("the Tasks table (-want +got):\n%s", diff)
	}

	all := tasksSection(t, describeText(r, true))
	for _, want := range []string{"\n    many.0    Succeeded", "\n    many.199  Pending", "\n  after       Pending"} {
		if !strings.Contains(all, want) {
			t.Errorf("with --children the table lacks %q:\n%s", want, all)
		}
	}
	if n := strings.Count(all, "\n    many."); n != 200 || strings.Contains(all, "…") {
		t.Errorf("with --children the table lists %d children and folds some: %v; want all 200, none folded", n, strings.Contains(all, "…"))
	}
}

func TestDescribeFoldsOnlyPastTenChildren(t *testing.T) {
	t.Parallel()
	ten := &apiv1.Run{ID: "ten-1", Status: apiv1.RunStatus{Nodes: bigMap(10, nil)}}
	if got := tasksSection(t, describeText(ten, false)); strings.Count(got, "\n    many.") != 10 || strings.Contains(got, "…") {
		t.Errorf("a map of 10 is folded:\n%s", got)
	}
	eleven := &apiv1.Run{ID: "eleven-1", Status: apiv1.RunStatus{Nodes: bigMap(11, nil)}}
	got := tasksSection(t, describeText(eleven, false))
	if strings.Contains(got, "\n    many.") || !strings.Contains(got, "\n    … 11 more succeeded; kiln describe run eleven-1 --children lists all\n") {
		t.Errorf("a map of 11 that succeeded is not folded to one line:\n%s", got)
	}
}

func TestDescribeListsAtMostTwentyChildrenOfAFoldedGroup(t *testing.T) {
	t.Parallel()
	odd := map[int]apiv1.Phase{}
	for i := range 30 {
		odd[i] = apiv1.PhaseFailed
	}
	r := &apiv1.Run{ID: "bad-1", Status: apiv1.RunStatus{Nodes: bigMap(40, odd)}}
	got := tasksSection(t, describeText(r, false))
	if n := strings.Count(got, "\n    many."); n != 20 || !strings.Contains(got, "\n    many.19 ") || strings.Contains(got, "many.20 ") {
		t.Errorf("the table lists %d children, want many.0 to many.19:\n%s", n, got)
	}
	if want := "\n    … 20 more: 10 failed, 10 succeeded; kiln describe run bad-1 --children lists all\n"; !strings.Contains(got, want) {
		t.Errorf("the table lacks %q:\n%s", want, got)
	}
}

func TestDescribeShowsTheRunsOutputsAfterItsParams(t *testing.T) {
	t.Parallel()
	outputs := &apiv1.RunOutputs{
		Parameters: map[string]string{"lens": `["len-a","len-b"]`, "best": "0.93\n"},
		Artifacts:  map[string]string{"model": "/data/model.pt"},
	}
	r := &apiv1.Run{ID: "out-1", Params: map[string]string{"code": "0"}, Status: apiv1.RunStatus{Phase: apiv1.PhaseSucceeded, Outputs: outputs}}
	want := "Params:\n  code=0\nOutputs:\n  best=0.93 \n  lens=[\"len-a\",\"len-b\"]\n  artifact model=/data/model.pt\nTasks:\n"
	if got := describeText(r, false); !strings.Contains(got, want) {
		t.Errorf("describe lacks %q:\n%s", want, got)
	}
	r.Status.Outputs = nil
	if got := describeText(r, false); strings.Contains(got, "Outputs:") {
		t.Errorf("describe of a run without outputs shows them:\n%s", got)
	}
}

func TestDescribeChildrenFlagListsEveryChild(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	st, err := sqlite.Open(t.Context(), filepath.Join(home, "kiln.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	nodes := bigMap(12, map[int]apiv1.Phase{5: apiv1.PhaseFailed})
	err = st.CreateRun(t.Context(), store.CreateRunParams{
		Run:   apiv1.Run{ID: "big-2", Name: "big", Kind: apiv1.KindWorkflow, CreatedAt: gateSince, Workflow: &apiv1.Workflow{}},
		Nodes: []string{"many", "after"}, Owner: "elsewhere", LeaseUntil: time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	change := &store.Change{Run: "big-2", Owner: "elsewhere", Status: &apiv1.RunStatus{Phase: apiv1.PhaseRunning}, Nodes: nodes[:2], Added: nodes[2:]}
	if err := st.Apply(t.Context(), change); err != nil {
		t.Fatal(err)
	}

	for args, want := range map[string]int{"describe run big-2": 1, "describe run big-2 --children": 12} {
		code, out, errOut := kiln(t, append([]string{"--home", home}, strings.Fields(args)...)...)
		if code != 0 {
			t.Fatalf("kiln %s = %d, %s", args, code, errOut)
		}
		if got := strings.Count(out, "\n    many."); got != want {
			t.Errorf("kiln %s lists %d children, want %d:\n%s", args, got, want, out)
		}
	}
}

// TestDescribeCountsTheChildrenItDidNotRead: describe reads of a large
// group only the children it lists; the others, counted by phase, are
// folded with the rest.
func TestDescribeCountsTheChildrenItDidNotRead(t *testing.T) {
	t.Parallel()
	all := bigMap(500, map[int]apiv1.Phase{3: apiv1.PhaseFailed, 4: apiv1.PhaseRunning, 9: apiv1.PhasePending})
	var read []apiv1.NodeStatus
	for _, n := range all {
		if n.Parent == "" || n.Phase == apiv1.PhaseFailed || n.Phase == apiv1.PhaseRunning {
			read = append(read, n)
		}
	}
	r := &apiv1.Run{ID: "huge-1", Status: apiv1.RunStatus{Nodes: read}}
	var b bytes.Buffer
	writeDescription(&b, r, map[string]map[apiv1.Phase]int{"many": {apiv1.PhaseSucceeded: 497, apiv1.PhasePending: 1}}, nil, false)
	got := tasksSection(t, b.String())
	if !strings.Contains(got, "\n    many.3 ") || !strings.Contains(got, "\n    many.4 ") || strings.Count(got, "\n    many.") != 2 {
		t.Errorf("the table should list many.3 and many.4 alone:\n%s", got)
	}
	if want := "\n    … 498 more: 1 pending, 497 succeeded; kiln describe run huge-1 --children lists all\n"; !strings.Contains(got, want) {
		t.Errorf("the table lacks %q:\n%s", want, got)
	}
}
