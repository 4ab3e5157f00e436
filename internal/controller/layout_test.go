package controller

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxControllerMethods bounds the Controller type: it keeps the loop, the
// one commit per round and the side effects; what else it did is now a
// component of its own (Runs, Leadership, Parts, admission, results,
// waits, reports), and new work goes to one of those or a new one.
const maxControllerMethods = 40

// TestControllerStaysSmall counts the methods declared on *Controller
// and checks that none are promoted into it from an embedded field,
// which would hide a component's methods in the controller's.
func TestControllerStaysSmall(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var methods []string
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && receiverIs(d.Recv.List[0].Type, "Controller") {
					methods = append(methods, file+": "+d.Name.Name)
				}
			case *ast.GenDecl:
				checkNoEmbedding(t, d)
			}
		}
	}
	if len(methods) == 0 {
		t.Fatal("found no methods of Controller: the test reads the wrong files")
	}
	if len(methods) > maxControllerMethods {
		sort.Strings(methods)
		t.Errorf("Controller has %d methods, more than %d; move some to a component:\n%s",
			len(methods), maxControllerMethods, strings.Join(methods, "\n"))
	}
}

// receiverIs reports whether a receiver's type is name or *name.
func receiverIs(expr ast.Expr, name string) bool {
	if star, ok := expr.(*ast.StarExpr); ok {
		expr = star.X
	}
	id, ok := expr.(*ast.Ident)
	return ok && id.Name == name
}

// checkNoEmbedding fails t if d declares Controller with an embedded field.
func checkNoEmbedding(t *testing.T, d *ast.GenDecl) {
	t.Helper()
	for _, spec := range d.Specs {
		ts, ok := spec.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Controller" {
			continue
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			t.Fatalf("Controller is not a struct")
		}
		for _, field := range st.Fields.List {
			if len(field.Names) == 0 {
				t.Errorf("Controller embeds %s: its methods would be the controller's; name the field", typeString(field.Type))
			}
		}
	}
}

func typeString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return "*" + typeString(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return typeString(e.X) + "." + e.Sel.Name
	}
	return "a type"
}
