package v1alpha1

import (
	"errors"
	"strconv"
	"strings"
)

// Error is an error a user can see: a stable code, where it happened (file,
// object, field), what is wrong and, when there is one, how to fix it.
type Error struct {
	// Code is the stable error code.
	Code Code `json:"code"`
	// File is the file the error was found in, if any.
	File string `json:"file,omitempty"`
	// Line is the line of File the error is at, from 1; 0 when unknown.
	Line int `json:"line,omitempty"`
	// Column is the column of Line the error is at, from 1; 0 when unknown.
	Column int `json:"column,omitempty"`
	// Object is the resource, as Kind/name ("Workflow/train").
	Object string `json:"object,omitempty"`
	// Field is the path of the field, as in "spec.tasks[1].dependsOn[0]".
	Field string `json:"field,omitempty"`
	// Message says what is wrong.
	Message string `json:"message"`
	// Hint says how to fix it; empty means the code's registered hint.
	Hint string `json:"hint,omitempty"`
	// Omitted, on a KLN-1086 error, counts the errors of code OmittedCode
	// at fields of the pattern Field left out of the list: those after
	// the first MaxOfKind, which the list holds just before this one.
	Omitted int `json:"omitted,omitempty"`
	// OmittedCode is the code of the errors Omitted counts.
	OmittedCode Code `json:"omittedCode,omitempty"`
}

// Error formats e on one line: code, place, message and hint.
func (e *Error) Error() string {
	if e.File == "" && e.Object == "" && e.Field == "" {
		return string(e.Code) + ": " + e.Text()
	}
	return string(e.Code) + " " + e.Text()
}

// Text is Error without the code, for records that keep the code in a
// field of its own: place, message and hint. The place is written as
// compilers and linters write it: file:line:column, then object and field.
func (e *Error) Text() string {
	var b strings.Builder
	for _, part := range []string{e.place(), e.Object, e.Field} {
		if part != "" {
			b.WriteString(part)
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Message)
	if h := e.hint(); h != "" {
		b.WriteString(" (hint: ")
		b.WriteString(h)
		b.WriteString(")")
	}
	return b.String()
}

// place is File with its Line and Column, when known.
func (e *Error) place() string {
	switch {
	case e.File == "" || e.Line <= 0:
		return e.File
	case e.Column <= 0:
		return e.File + ":" + strconv.Itoa(e.Line)
	}
	return e.File + ":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column)
}

func (e *Error) hint() string {
	if e.Hint != "" {
		return e.Hint
	}
	return e.Code.Hint()
}

// Errorf returns an *Error with code c and message msg.
func Errorf(c Code, msg string) *Error {
	return &Error{Code: c, Message: msg}
}

// Errors returns every *Error inside err, unwrapping errors.Join trees.
func Errors(err error) []*Error {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*Error
		for _, e := range joined.Unwrap() {
			out = append(out, Errors(e)...)
		}
		return out
	}
	var e *Error
	if errors.As(err, &e) {
		return []*Error{e}
	}
	return nil
}

// CodeOf returns the code of the first *Error in err's chain, or "".
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
