package expr

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// dparser parses a depends expression by recursive descent:
//
//	or      = and { "||" and }
//	and     = unary { "&&" unary }
//	unary   = "!" unary | "(" or ")" | operand
//	operand = name [ "." result ]
//
// It stops at the first problem; the tree it returns then is not used.
type dparser struct {
	src   string
	known func(string) bool
	off   int  // byte offset of the next character
	at    dpos // place of the next character
	tok   token
	tasks []string
	err   *Error
}

// dpos is a place in the source, from 1, in characters.
type dpos struct{ line, col int }

type tkind int

const (
	tEOF tkind = iota
	tName
	tDot
	tAnd
	tOr
	tNot
	tOpen
	tClose
)

type token struct {
	kind tkind
	text string
	pos  dpos
}

// String names the token in an error message.
func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "the end of the expression"
	case tName:
		return fmt.Sprintf("%q", t.text)
	}
	return t.text
}

func (p *dparser) or() *dnode {
	n := p.and()
	for p.tok.kind == tOr {
		p.next()
		n = &dnode{op: "||", l: n, r: p.and()}
	}
	return n
}

func (p *dparser) and() *dnode {
	n := p.unary()
	for p.tok.kind == tAnd {
		p.next()
		n = &dnode{op: "&&", l: n, r: p.unary()}
	}
	return n
}

func (p *dparser) unary() *dnode {
	switch p.tok.kind {
	case tNot:
		p.next()
		return &dnode{op: "!", l: p.unary()}
	case tOpen:
		open := p.tok.pos
		p.next()
		n := p.or()
		switch p.tok.kind {
		case tClose:
			p.next()
		case tEOF:
			p.failf(open, "this ( is never closed")
		default:
			p.failf(p.tok.pos, "expected &&, || or ), found %s", p.tok)
		}
		return n
	case tName:
		return p.operand()
	}
	p.failf(p.tok.pos, "expected a task's name, ! or (, found %s", p.tok)
	return &dnode{}
}

func (p *dparser) operand() *dnode {
	name := p.tok
	p.next()
	p.task(name)
	n := &dnode{task: name.text}
	if p.tok.kind != tDot {
		return n
	}
	p.next()
	switch {
	case p.tok.kind != tName:
		p.failf(p.tok.pos, "expected a result after %s., found %s; %s", name.text, p.tok, knownResults)
	case !isResult(p.tok.text):
		p.failf(p.tok.pos, "unknown result %s of task %s; %s", p.tok, name, knownResults)
	}
	n.result = p.tok.text
	p.next()
	return n
}

// task checks a task's name and adds it to p.tasks.
func (p *dparser) task(name token) {
	switch {
	case p.known != nil && !p.known(name.text):
		p.failf(name.pos, "unknown task %s", name)
	case !slices.Contains(p.tasks, name.text):
		p.tasks = append(p.tasks, name.text)
	}
}

// next reads the next token into p.tok. After a problem, every token is
// the end.
func (p *dparser) next() {
	for p.off < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.off]) >= 0 {
		p.advance(1)
	}
	rest := p.src[p.off:]
	p.tok = token{kind: tEOF, pos: p.at}
	if rest == "" || p.err != nil {
		return
	}
	kind, n := lex(rest)
	if kind == tEOF {
		switch r, _ := utf8.DecodeRuneInString(rest); r {
		case '&', '|':
			p.failf(p.at, "found a single %c; and is written &&, or is written ||", r)
		default:
			p.failf(p.at, "unexpected character %q", r)
		}
		return
	}
	p.tok.kind = kind
	p.tok.text = rest[:n]
	p.advance(n)
}

// lex returns the kind and length in bytes of the token rest starts with,
// or tEOF for a character that starts none.
func lex(rest string) (tkind, int) {
	switch {
	case isNameByte(rest[0]):
		n := 1
		for n < len(rest) && isNameByte(rest[n]) {
			n++
		}
		return tName, n
	case strings.HasPrefix(rest, "&&"):
		return tAnd, 2
	case strings.HasPrefix(rest, "||"):
		return tOr, 2
	}
	switch rest[0] {
	case '.':
		return tDot, 1
	case '!':
		return tNot, 1
	case '(':
		return tOpen, 1
	case ')':
		return tClose, 1
	}
	return tEOF, 0
}

// advance moves past the next n bytes.
func (p *dparser) advance(n int) {
	for _, r := range p.src[p.off : p.off+n] {
		if r == '\n' {
			p.at = dpos{p.at.line + 1, 1}
		} else {
			p.at.col++
		}
	}
	p.off += n
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// failf records the first problem.
func (p *dparser) failf(at dpos, format string, args ...any) {
	if p.err == nil {
		p.err = &Error{Expr: p.src, Line: at.line, Column: at.col, Message: fmt.Sprintf(format, args...)}
	}
}
