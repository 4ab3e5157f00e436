package cli

import (
	"bytes"
	"regexp"

	"gopkg.in/yaml.v3"
)

// currentContextLine is a top-level current-context line, with the
// comment it may end with.
var currentContextLine = regexp.MustCompile(`(?m)^current-context:[^#\n]*?([ \t]+#.*)?$`)

// editCurrentContext sets current-context to name in data by changing
// (or adding) that one line, so the rest of the file stays as its author
// wrote it, as kubectl config use-context does. It reports false when the
// edit does not read back as exactly that change (a flow mapping, a
// value over several lines): the caller then writes the file from nodes.
func editCurrentContext(data []byte, name string) ([]byte, bool) {
	quoted, err := yaml.Marshal(name)
	if err != nil {
		return nil, false
	}
	line := append([]byte("current-context: "), bytes.TrimSpace(quoted)...)
	var out []byte
	switch locs := currentContextLine.FindAllSubmatchIndex(data, -1); len(locs) {
	case 0:
		out = append(bytes.Clone(data), '\n')
		if len(data) == 0 || data[len(data)-1] == '\n' {
			out = out[:len(data)]
		}
		out = append(append(out, line...), '\n')
	case 1:
		loc := locs[0]
		if loc[2] >= 0 {
			line = append(line, data[loc[2]:loc[3]]...) // the line's comment
		}
		out = append(append(bytes.Clone(data[:loc[0]]), line...), data[loc[1]:]...)
	default:
		return nil, false
	}
	return out, sameButCurrent(data, out, name)
}

// sameButCurrent reports whether after reads as before with
// current-context set to name, and nothing else changed.
func sameButCurrent(before, after []byte, name string) bool {
	var a, b map[string]any
	if yaml.Unmarshal(before, &a) != nil || yaml.Unmarshal(after, &b) != nil || a == nil || b == nil {
		return false
	}
	if b["current-context"] != name {
		return false
	}
	a["current-context"] = name
	ya, errA := yaml.Marshal(a)
	yb, errB := yaml.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ya, yb)
}
