package workflow

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkCompileLayered compiles a 10,000-task DAG in layers of 100,
// each task reading a param and an upstream output, already decoded.
func BenchmarkCompileLayered(b *testing.B) {
	var s strings.Builder
	s.WriteString("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: dag}\nspec:\n  params: [{name: p, default: x}]\n  tasks:\n")
	for i := range 10000 {
		fmt.Fprintf(&s, "  - name: t%d\n    command: [echo, '{{params.p}}']\n    outputs: {parameters: [{name: o}]}\n", i)
		if i >= 100 {
			fmt.Fprintf(&s, "    dependsOn: [t%d]\n    args: ['{{tasks.t%d.outputs.parameters.o}}']\n", i-100, i-100)
		}
	}
	docs, err := Read("dag.yaml", strings.NewReader(s.String()))
	if err != nil {
		b.Fatal(err)
	}
	wf, err := DecodeWorkflow(&docs[0])
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Compile(&docs[0], wf, nil); err != nil {
			b.Fatal(err)
		}
	}
}
