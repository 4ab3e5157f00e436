package controller

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestControllerNeverAsksWhichKindANodeIs keeps node kinds out of the
// engine: what a node is belongs to its handler (internal/node). The
// controller may use the optional capabilities a handler has, never the
// fields or packages of one kind.
func TestControllerNeverAsksWhichKindANodeIs(t *testing.T) {
	t.Parallel()

	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbiddenImports := []string{
		"kiln.dev/kiln/internal/training", "kiln.dev/kiln/internal/node/command",
		"kiln.dev/kiln/internal/node/train", "kiln.dev/kiln/internal/node/builtin",
		"kiln.dev/kiln/internal/node/mapper", "kiln.dev/kiln/internal/node/dynamic",
		"kiln.dev/kiln/internal/node/subworkflow", "kiln.dev/kiln/internal/node/gate",
		"kiln.dev/kiln/internal/node/sensor",
	}
	forbiddenSelectors := map[string]string{
		"Train":               "a training job's own fields",
		"Command":             "a command's own fields",
		"NodeKindCommand":     "a kind by name",
		"NodeKindTrain":       "a kind by name",
		"NodeKindMap":         "a kind by name",
		"NodeKindDynamic":     "a kind by name",
		"NodeKindSubworkflow": "a kind by name",
		"NodeKindGate":        "a kind by name",
		"NodeKindExit":        "a kind by name",
		"NodeKindSensor":      "a kind by name",
		"GateApprove":         "a gate's kind by name",
		"GateSleep":           "a gate's kind by name",
		"GateSignal":          "a gate's kind by name",
		"Map":                 "a map's own fields",
		"ForEach":             "a map's own fields",
	}
	// A waiter's own words: what a gate or a sensor waits for is its
	// handler's to say (node.Waiter.Describe, TakesInput).
	forbiddenStrings := []string{"sleep", "approve", "signal", "file", "sensor"}
	fset := token.NewFileSet()
	checked := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbiddenImports {
				if path == bad {
					t.Errorf("%s imports %s: the controller talks to node kinds through internal/node only", fset.Position(imp.Pos()), path)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil && slices.Contains(forbiddenStrings, v) {
					t.Errorf("%s names %q, a kind of waiting node: ask the node's handler instead", fset.Position(lit.Pos()), v)
				}
			}
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if what, bad := forbiddenSelectors[sel.Sel.Name]; bad {
					t.Errorf("%s uses .%s, %s: ask the node's handler instead", fset.Position(sel.Pos()), sel.Sel.Name, what)
				}
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("checked only %d files: the test is not looking at the controller", checked)
	}
}
