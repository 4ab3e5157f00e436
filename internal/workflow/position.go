package workflow

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// lineCounter finds where each document Read returns starts in the file:
// a document is a run of the file's lines, found after the one before.
type lineCounter struct {
	data []byte
	at   int // bytes of data passed
}

// start is the line, from 1, that raw starts at, raw being the next
// document of data; 0 when it cannot be found.
func (c *lineCounter) start(raw []byte) int {
	i := bytes.Index(c.data[c.at:], raw)
	if i < 0 || len(raw) == 0 {
		return 0
	}
	line := 1 + bytes.Count(c.data[:c.at+i], []byte("\n"))
	c.at += i + len(raw)
	return line
}

// yamlLine is the line number a YAML parser's error names.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// parseError is KLN-1001 for a document YAML cannot parse, at the line of
// the file the parser names.
func parseError(doc *Document, err error) *apiv1.Error {
	e := &apiv1.Error{Code: apiv1.CodeParse, File: doc.File, Object: doc.Object(), Message: err.Error()}
	if m := yamlLine.FindStringSubmatch(e.Message); m != nil && doc.Line > 0 {
		n, _ := strconv.Atoi(m[1])
		e.Line, e.Message = doc.Line+n-1, strings.TrimPrefix(e.Message, m[0])
	}
	return e
}

// locate sets e's line and column, unless it has them, to where e.Field
// is written in d: the key of a mapping's field, the item of a list, or,
// where the path leaves what is written (a field that is missing), the
// last part of it that is; the document's start when e names no field.
// A KLN-1086 error, which counts errors at many places, is at none.
func (d *Document) locate(e *apiv1.Error) {
	if e.Line > 0 || d.Line <= 0 || e.Code == apiv1.CodeMoreErrors {
		return
	}
	e.Line, e.Column = d.Line, 1
	node := writtenNode(d)
	if node == nil {
		return
	}
	if at := fieldNode(node, e.Field); at != nil {
		e.Line, e.Column = d.Line+at.Line-1, at.Column
	}
}

// writtenNode is the top value of d as the user wrote it.
func writtenNode(d *Document) *yaml3.Node {
	if d.written != nil {
		return d.written
	}
	return docNode(d)
}

// fieldNode is the node of path (spec.tasks[1].command) under node: the
// key node of a field, the node of a list's item; the deepest one
// written when the path goes on past it, nil for an empty path.
func fieldNode(node *yaml3.Node, path string) *yaml3.Node {
	var at *yaml3.Node
	for _, part := range pathParts(path) {
		if node != nil && node.Kind == yaml3.AliasNode {
			node = node.Alias
		}
		key, val := child(node, part)
		if key == nil {
			return at
		}
		at, node = key, val
	}
	return at
}

// child is the key (or item) node of part under node, and its value.
func child(node *yaml3.Node, part string) (key, val *yaml3.Node) {
	switch {
	case node == nil:
		return nil, nil
	case node.Kind == yaml3.SequenceNode && strings.HasPrefix(part, "["):
		i, err := strconv.Atoi(strings.Trim(part, "[]"))
		if err != nil || i < 0 || i >= len(node.Content) {
			return nil, nil
		}
		return node.Content[i], node.Content[i]
	case node.Kind == yaml3.MappingNode:
		part = strings.TrimSuffix(strings.TrimPrefix(part, "["), "]") // a key in brackets
		for i := 0; i+1 < len(node.Content); i += 2 {
			if node.Content[i].Value == part {
				return node.Content[i], node.Content[i+1]
			}
		}
	}
	return nil, nil
}

// pathParts splits a field path into keys and [i] indices:
// "spec.tasks[1].env[0]" is spec, tasks, [1], env, [0]. A key with a dot
// in it, as a label's, is written in brackets and kept whole:
// "nodeSelector[kubernetes.io/arch]" is nodeSelector, [kubernetes.io/arch].
func pathParts(path string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '.':
			if i > start {
				parts = append(parts, path[start:i])
			}
			start = i + 1
		case '[':
			if i > start {
				parts = append(parts, path[start:i])
			}
			j := strings.IndexByte(path[i:], ']')
			if j < 0 {
				return append(parts, path[i:])
			}
			parts = append(parts, path[i:i+j+1])
			i += j
			start = i + 1
		}
	}
	if start < len(path) {
		parts = append(parts, path[start:])
	}
	return parts
}

// locateAll sets the line and column of every coded error of err that
// names a document of docs (its file and object) and has none.
func locateAll(docs []Document, err error) {
	for _, e := range apiv1.Errors(err) {
		if e.File == "" || e.Line > 0 {
			continue
		}
		for i := range docs {
			if d := &docs[i]; d.File == e.File && d.Object() == e.Object {
				d.locate(e)
				break
			}
		}
	}
}
