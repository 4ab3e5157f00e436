package sqlstore

import (
	"fmt"
	"strings"
)

// SchemaVersionLine prefixes the line of a store's generated schema.sql
// that says how many migrations it holds.
const SchemaVersionLine = "-- version: "

// SchemaFileVersion is the number of migrations a generated schema.sql
// holds, read from its version line.
func SchemaFileVersion(schema string) (int, error) {
	for line := range strings.Lines(schema) {
		if v, ok := strings.CutPrefix(line, SchemaVersionLine); ok {
			var n int
			if _, err := fmt.Sscan(v, &n); err != nil || n < 1 {
				return 0, fmt.Errorf("schema.sql: bad version line %q", strings.TrimSpace(line))
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("schema.sql: no version line")
}
