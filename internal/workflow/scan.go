package workflow

import (
	"fmt"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Bounds of one document, checked on its YAML before it is converted:
// aliases may repeat a part of a document without copying it, so a small
// file can stand for a huge one ("billion laughs").
const (
	// maxDepth bounds how deeply mappings and lists nest, aliases expanded.
	maxDepth = 100
	// maxExpanded bounds a document's size with its aliases expanded, in
	// bytes of its values plus a few for each value. A document without
	// aliases of at most MaxFileSize is well within it.
	maxExpanded = 4 * MaxFileSize
)

// scan walks a document's YAML once, every node by its definition (an
// alias's target once, wherever it is used), and finds what no decoder
// reports: keys written twice in one mapping, NaN and infinities, and
// the size and depth of the document with its aliases expanded.
type scan struct {
	// sizes holds, for each anchored node, its expanded size and depth.
	sizes map[*yaml3.Node]extent
	// path is the field path to the node being walked, one name a level.
	path []string
	// problems are what was found, as errors without a document.
	problems []*apiv1.Error
}

type extent struct{ size, depth int }

// scanDocument scans root and returns the problems found. tooBig is
// KLN-1023 when the document is too large or too deep: nothing else
// about it is to be trusted then, and it must not be converted.
func scanDocument(root *yaml3.Node) (problems []*apiv1.Error, tooBig *apiv1.Error) {
	s := &scan{sizes: map[*yaml3.Node]extent{}}
	e := s.walk(root)
	switch {
	case e.size > maxExpanded:
		return nil, &apiv1.Error{
			Code:    apiv1.CodeOutOfRange,
			Message: fmt.Sprintf("the document is larger than %d MiB with its aliases expanded", maxExpanded>>20),
			Hint:    "write the document without aliases that repeat large parts of it",
		}
	case e.depth > maxDepth:
		return nil, &apiv1.Error{Code: apiv1.CodeOutOfRange, Message: fmt.Sprintf("mappings and lists nest more than %d deep", maxDepth)}
	}
	return s.problems, nil
}

// nodeHead reads kind and metadata.name from a document's YAML, for
// naming a document that could not be converted.
func nodeHead(root *yaml3.Node) (kind, name string) {
	if len(root.Content) == 0 || root.Content[0].Kind != yaml3.MappingNode {
		return "", ""
	}
	top := root.Content[0].Content
	for i := 0; i+1 < len(top); i += 2 {
		switch k, v := top[i].Value, top[i+1]; {
		case k == "kind" && v.Kind == yaml3.ScalarNode:
			kind = v.Value
		case k == "metadata" && v.Kind == yaml3.MappingNode:
			for j := 0; j+1 < len(v.Content); j += 2 {
				if v.Content[j].Value == "name" && v.Content[j+1].Kind == yaml3.ScalarNode {
					name = v.Content[j+1].Value
				}
			}
		}
	}
	return kind, name
}

// walk returns n's extent. It stops adding once either bound is passed.
func (s *scan) walk(n *yaml3.Node) extent {
	if n == nil {
		return extent{}
	}
	if n.Kind == yaml3.AliasNode {
		n = n.Alias
		if e, ok := s.sizes[n]; ok {
			return e
		}
		// An alias to a node not yet walked: yaml refuses these, but a
		// bound holds whatever the parser allows.
		return extent{size: maxExpanded + 1}
	}
	e := s.node(n)
	if n.Anchor != "" {
		s.sizes[n] = e
	}
	return e
}

func (s *scan) node(n *yaml3.Node) extent {
	switch n.Kind {
	case yaml3.ScalarNode:
		s.finite(n)
		return extent{size: len(n.Value) + 4}
	case yaml3.MappingNode:
		s.duplicates(n)
	}
	e := extent{size: 4}
	for i, c := range n.Content {
		pushed := s.push(n, i)
		ce := s.walk(c)
		if pushed {
			s.path = s.path[:len(s.path)-1]
		}
		e.size += ce.size
		e.depth = max(e.depth, ce.depth)
		if e.size > maxExpanded || e.depth > maxDepth {
			break
		}
	}
	e.depth++
	return e
}

// push adds the name of n's child i to the path, if it has one: a list's
// items are [i], a mapping's values their key; keys themselves add none.
func (s *scan) push(n *yaml3.Node, i int) bool {
	switch n.Kind {
	case yaml3.SequenceNode:
		s.path = append(s.path, fmt.Sprintf("[%d]", i))
	case yaml3.MappingNode:
		if i%2 == 0 {
			return false
		}
		s.path = append(s.path, "."+n.Content[i-1].Value)
	default:
		return false
	}
	return true
}

// field is the current path, as errors name fields.
func (s *scan) field(last string) string {
	return strings.TrimPrefix(strings.Join(s.path, "")+last, ".")
}

// duplicates reports each key of mapping n written again after its first
// line, naming both lines: YAML keeps only the later value, so a file
// that shows one command could run another.
func (s *scan) duplicates(n *yaml3.Node) {
	first := make(map[string]*yaml3.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml3.ScalarNode {
			continue
		}
		was, seen := first[k.Value]
		if !seen {
			first[k.Value] = k
			continue
		}
		where := fmt.Sprintf("lines %d and %d", was.Line, k.Line)
		if was.Line == k.Line {
			where = fmt.Sprintf("line %d, columns %d and %d", k.Line, was.Column, k.Column)
		}
		s.problems = append(s.problems, &apiv1.Error{
			Code: apiv1.CodeDuplicateKey, Field: s.field("." + k.Value),
			Message: fmt.Sprintf("key %q appears twice: %s", k.Value, where),
		})
	}
}

// finite reports a NaN or an infinity: no field takes one, and JSON has
// no way to write it.
func (s *scan) finite(n *yaml3.Node) {
	if n.Style != 0 || n.ShortTag() != "!!float" {
		return
	}
	v := strings.ToLower(strings.TrimLeft(n.Value, "+-"))
	if v != ".nan" && v != ".inf" {
		return
	}
	s.problems = append(s.problems, &apiv1.Error{
		Code: apiv1.CodeOutOfRange, Field: s.field(""),
		Message: fmt.Sprintf("%s is read as a number that is not finite; no field takes one", n.Value),
		Hint:    fmt.Sprintf("quote it if it is text: %q", n.Value),
	})
}
