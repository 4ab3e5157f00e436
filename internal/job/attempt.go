package job

import (
	"fmt"
	"strconv"
	"strings"
)

// AttemptID names one attempt of one node of a run. It is deterministic:
// the engine builds the same ID for the same attempt after a restart, and
// backends name everything they create after it, so nothing is created
// twice. Its text form is "<run>/<node>/<number>".
type AttemptID struct {
	// Run is the run's ID.
	Run string
	// Node is the node's name within the run.
	Node string
	// Number counts the node's attempts from 1.
	Number int
}

// String returns the text form, "<run>/<node>/<number>".
func (a AttemptID) String() string {
	return a.Run + "/" + a.Node + "/" + strconv.Itoa(a.Number)
}

// IsZero reports whether a names no attempt.
func (a AttemptID) IsZero() bool { return a == AttemptID{} }

// ParseAttemptID reads the text form of an attempt ID. Run and node must
// be non-empty and free of '/', and the number at least 1.
func ParseAttemptID(s string) (AttemptID, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return AttemptID{}, fmt.Errorf("attempt ID %q is not <run>/<node>/<number>", s)
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil || n < 1 || strconv.Itoa(n) != parts[2] {
		return AttemptID{}, fmt.Errorf("attempt ID %q does not end in an attempt number from 1", s)
	}
	return AttemptID{Run: parts[0], Node: parts[1], Number: n}, nil
}

// MarshalText implements encoding.TextMarshaler, so an ID travels (JSON,
// gob, map keys) in its text form.
func (a AttemptID) MarshalText() ([]byte, error) {
	if a.IsZero() {
		return nil, nil
	}
	return []byte(a.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *AttemptID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*a = AttemptID{}
		return nil
	}
	id, err := ParseAttemptID(string(b))
	if err != nil {
		return err
	}
	*a = id
	return nil
}
