package expr

import "fmt"

// Error is a problem in an expression's source, found when it is compiled.
// The caller adds the field and the error code.
type Error struct {
	// Expr is the expression's source.
	Expr string
	// Line is where the problem is, from 1; 0 when the problem is the
	// expression as a whole.
	Line int
	// Column is where the problem is in its line, from 1, in characters;
	// 0 when the problem is the expression as a whole.
	Column int
	// Message says what is wrong, in a user's words.
	Message string
}

// Error returns the message, after its place: "column 7: ..." in a
// one-line expression, "line 2, column 7: ..." in a longer one.
func (e *Error) Error() string {
	switch {
	case e.Column == 0:
		return e.Message
	case e.Line > 1:
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
	default:
		return fmt.Sprintf("column %d: %s", e.Column, e.Message)
	}
}

// MaxLen is the longest expression, in bytes, that compiles. Longer ones are
// refused before they are parsed.
const MaxLen = 4096

// checkLen refuses an expression longer than MaxLen.
func checkLen(src string) error {
	if len(src) > MaxLen {
		return &Error{Expr: src, Message: fmt.Sprintf("the expression is %d bytes long; the most is %d", len(src), MaxLen)}
	}
	return nil
}
