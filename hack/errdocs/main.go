// Command errdocs writes docs/errors.md from the one registry of error
// codes, apiv1.CodeInfos. Run it through go generate.
package main

import (
	"fmt"
	"os"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func main() {
	out := "docs/errors.md"
	if len(os.Args) > 1 {
		out = os.Args[1]
	}
	if err := os.WriteFile(out, []byte(render()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

var groups = map[byte]string{
	'1': "Spec validation", '2': "Admission and resources", '3': "Execution",
	'4': "API and command line", '5': "Store", '6': "Backend", '7': "Federation",
}

func render() string {
	var b strings.Builder
	b.WriteString("# Error codes\n\nGenerated from `api/v1alpha1/codes.go` by `go generate ./...`; do not edit.\n")
	b.WriteString("Every error kiln shows a user carries one of these codes, the file, object and field it\n")
	b.WriteString("concerns where there is one, and a hint.\n")
	var group byte
	for _, c := range apiv1.CodeInfos() {
		if g := c.Code[4]; g != group {
			group = g
			fmt.Fprintf(&b, "\n## %sxxx: %s\n\n| code | meaning | hint |\n| --- | --- | --- |\n", string(g), groups[g])
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", c.Code, c.Meaning, c.Hint)
	}
	return b.String()
}
