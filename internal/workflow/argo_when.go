package workflow

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// when translates an Argo when (govaluate over the text its {{...}}
// references become, or one {{= ...}} expression tag) into a kiln
// condition (CEL). Bare words are strings, as Argo reads them; a
// comparison with a number, or an ordering, compares numbers.
func (a *argoConv) when(sc *argoScope, field, s string) string {
	sc = sc.at(field)
	t := strings.TrimSpace(s)
	var toks []wtok
	var err error
	if strings.HasPrefix(t, "{{=") && strings.HasSuffix(t, "}}") && strings.Count(t, "{{") == 1 {
		toks, err = sc.exprTokens(t[3 : len(t)-2])
	} else {
		toks, err = sc.whenTokens(t)
	}
	if err != nil {
		sc.fail(fmt.Sprintf("kiln cannot read this condition as a kiln (CEL) condition: %v", err),
			"write it with {{...}} references, quoted or bare strings, numbers, ==, !=, <, >, <=, >=, =~, !, && and ||")
		return ""
	}
	return joinWhen(toks)
}

// wtok is a token of a condition, already in CEL.
type wtok struct {
	text string
	// kind: 'r' a reference, 's' a string, 'n' a number, 'o' an operator.
	kind byte
	// glued: no space separates it from the token before.
	glued bool
}

func (t wtok) operand() bool { return t.kind != 'o' }

var whenOps = []string{"==", "!=", "<=", ">=", "=~", "!~", "&&", "||", "<", ">", "!", "(", ")"}

// whenTokens reads a govaluate condition.
func (s *argoScope) whenTokens(src string) ([]wtok, error) {
	var out []wtok
	space := true
	for i := 0; i < len(src); {
		c := src[i]
		glued := !space
		space = false
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			space = true
			i++
		case strings.HasPrefix(src[i:], "{{"):
			end := strings.Index(src[i:], "}}")
			if end < 0 {
				return nil, fmt.Errorf("{{ is not closed")
			}
			cel, err := s.celRef(strings.TrimSpace(src[i+2 : i+end]))
			if err != nil {
				return nil, err
			}
			out = append(out, wtok{text: cel, kind: 'r', glued: glued})
			i += end + 2
		case c == '\'' || c == '"':
			end := strings.IndexByte(src[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("a string is not closed")
			}
			out = append(out, wtok{text: strconv.Quote(src[i+1 : i+1+end]), kind: 's', glued: glued})
			i += end + 2
		default:
			if op := opAt(src[i:]); op != "" {
				out = append(out, wtok{text: op, kind: 'o'})
				i += len(op)
				space = true
				continue
			}
			j := i
			for j < len(src) && !strings.ContainsRune(" \t\n'\"", rune(src[j])) && opAt(src[j:]) == "" && !strings.HasPrefix(src[j:], "{{") {
				j++
			}
			word := src[i:j]
			kind := byte('s')
			text := strconv.Quote(word)
			if _, err := strconv.ParseFloat(word, 64); err == nil {
				kind, text = 'n', word
			}
			out = append(out, wtok{text: text, kind: kind, glued: glued})
			i = j
		}
	}
	return out, nil
}

func opAt(s string) string {
	for _, op := range whenOps {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	return ""
}

// celRef is the CEL operand for Argo's reference inner.
func (s *argoScope) celRef(inner string) (string, error) {
	p := strings.Split(inner, ".")
	switch {
	case len(p) == 3 && p[0] == "inputs" && p[1] == "parameters":
		if s.inputs != nil {
			if v, ok := s.inputs[p[2]]; ok {
				return strconv.Quote(v), nil
			}
			break
		}
		return "params[" + strconv.Quote(p[2]) + "]", nil
	case len(p) == 3 && p[0] == "workflow" && p[1] == "parameters":
		return "params[" + strconv.Quote(s.global(p[2])) + "]", nil
	case inner == "workflow.status" || inner == "workflow.failures":
		return inner, nil
	case inner == "item":
		return "item", nil
	case len(p) == 2 && p[0] == "item":
		return "item[" + strconv.Quote(p[1]) + "]", nil
	case len(p) == 3 && (p[0] == "steps" || p[0] == "tasks") && p[2] == "status":
		return "tasks[" + strconv.Quote(kilnName(p[1])) + "].phase", nil
	case len(p) >= 3 && (p[0] == "steps" || p[0] == "tasks"):
		out := nodeOutput(p)
		if out == "" || strings.HasPrefix(out, "outputs.artifacts") {
			break
		}
		return "tasks[" + strconv.Quote(kilnName(p[1])) + "].outputs.parameters[" + strconv.Quote(s.a.outputName(p[1], out[len("outputs.parameters."):])) + "]", nil
	}
	return "", fmt.Errorf("kiln has no counterpart for {{%s}} in a condition", inner)
}

// exprTokens reads an expr-lang expression tag's body: references are
// dotted or indexed paths, strings are quoted; no function is read.
func (s *argoScope) exprTokens(src string) ([]wtok, error) {
	var out []wtok
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '\'' || c == '"':
			end := strings.IndexByte(src[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("a string is not closed")
			}
			out = append(out, wtok{text: strconv.Quote(src[i+1 : i+1+end]), kind: 's'})
			i += end + 2
		case unicode.IsDigit(rune(c)):
			j := i
			for j < len(src) && (unicode.IsDigit(rune(src[j])) || src[j] == '.') {
				j++
			}
			out = append(out, wtok{text: src[i:j], kind: 'n'})
			i = j
		case unicode.IsLetter(rune(c)) || c == '_':
			path, j, err := exprPath(src, i)
			if err != nil {
				return nil, err
			}
			if t, ok := exprWord(path); ok {
				out = append(out, t)
				i = j
				continue
			}
			if strings.HasPrefix(strings.TrimLeft(src[j:], " "), "(") {
				return nil, fmt.Errorf("kiln does not call expr functions (%s)", path)
			}
			cel, err := s.celRef(path)
			if err != nil {
				return nil, err
			}
			out = append(out, wtok{text: cel, kind: 'r'})
			i = j
		default:
			op := opAt(src[i:])
			if op == "" || op == "=~" || op == "!~" {
				return nil, fmt.Errorf("kiln does not read %q in an expression tag", string(c))
			}
			out = append(out, wtok{text: op, kind: 'o'})
			i += len(op)
		}
	}
	return out, nil
}

// exprWord is an expr-lang keyword in CEL.
func exprWord(w string) (wtok, bool) {
	switch w {
	case "and":
		return wtok{text: "&&", kind: 'o'}, true
	case "or":
		return wtok{text: "||", kind: 'o'}, true
	case "not":
		return wtok{text: "!", kind: 'o'}, true
	case "true", "false":
		return wtok{text: w, kind: 'o'}, true
	}
	return wtok{}, false
}

// exprPath reads a path (a.b["c-d"].e) from i: its dotted form, and where it ends.
func exprPath(src string, i int) (string, int, error) {
	var parts []string
	j := i
	for j < len(src) {
		switch {
		case src[j] == '[':
			q := src[j+1:]
			if len(q) < 2 || (q[0] != '\'' && q[0] != '"') {
				return "", 0, fmt.Errorf("kiln reads an index only as a quoted name")
			}
			end := strings.IndexByte(q[1:], q[0])
			if end < 0 || len(q) < end+3 || q[end+2] != ']' {
				return "", 0, fmt.Errorf("an index is not closed")
			}
			parts = append(parts, q[1:1+end])
			j += end + 4
		case src[j] == '.':
			j++
		case unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j])) || src[j] == '_':
			k := j
			for k < len(src) && (unicode.IsLetter(rune(src[k])) || unicode.IsDigit(rune(src[k])) || src[k] == '_') {
				k++
			}
			parts = append(parts, src[j:k])
			j = k
		default:
			return strings.Join(parts, "."), j, nil
		}
	}
	return strings.Join(parts, "."), j, nil
}

// joinWhen writes tokens as CEL: glued operands are concatenated, a
// comparison with a number or an ordering compares numbers, and =~ is matches().
func joinWhen(toks []wtok) string {
	// Concatenate glued operands into one string operand.
	var ts []wtok
	for _, t := range toks {
		if t.glued && t.operand() && len(ts) > 0 && ts[len(ts)-1].operand() {
			prev := &ts[len(ts)-1]
			prev.text = asString(*prev) + " + " + asString(t)
			prev.kind = 'r'
			continue
		}
		ts = append(ts, t)
	}
	for i := 1; i+1 < len(ts); i++ {
		op := &ts[i]
		if op.kind != 'o' || !ts[i-1].operand() || !ts[i+1].operand() {
			continue
		}
		l, r := &ts[i-1], &ts[i+1]
		switch op.text {
		case "=~", "!~":
			neg := ""
			if op.text == "!~" {
				neg = "!"
			}
			l.text = neg + "(" + asString(*l) + ").matches(" + asString(*r) + ")"
			op.text, r.text = "", ""
		case "<", ">", "<=", ">=":
			l.text, r.text = asNumber(*l), asNumber(*r)
		case "==", "!=":
			if l.kind == 'n' || r.kind == 'n' {
				l.text, r.text = asNumber(*l), asNumber(*r)
			} else {
				l.text, r.text = asString(*l), asString(*r)
			}
		}
	}
	var parts []string
	for _, t := range ts {
		if t.text != "" {
			parts = append(parts, t.text)
		}
	}
	return strings.Join(parts, " ")
}

func asString(t wtok) string {
	if t.kind == 'n' {
		return strconv.Quote(t.text)
	}
	return t.text
}

func asNumber(t wtok) string {
	switch t.kind {
	case 'n':
		if !strings.ContainsAny(t.text, ".eE") {
			return t.text + ".0"
		}
		return t.text
	case 's':
		if f, err := strconv.ParseFloat(strings.Trim(t.text, `"`), 64); err == nil {
			return asNumber(wtok{text: strconv.FormatFloat(f, 'f', -1, 64), kind: 'n'})
		}
	}
	return "double(" + t.text + ")"
}
