package resource

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Bounds of what one request, and a pool, may hold. They are far above
// any machine or cluster kiln runs on, and far enough below int64's
// limits that a pool plus a request, or a gang of MaxReplicas requests'
// worth of nodes checked against them, cannot overflow.
const (
	// MaxMilliCPU is 100000 cores.
	MaxMilliCPU = 100_000 * 1000
	// MaxMemory is 2^60 bytes (1Ei).
	MaxMemory = 1 << 60
	// MaxGPU is 100000 devices.
	MaxGPU = 100_000
)

// Bounds of a quantity as written, checked before it is parsed, so that
// no quantity makes the parser expand a huge number.
const (
	// MaxQuantityLen is the longest quantity, in bytes.
	MaxQuantityLen = 64
	// MaxExponent bounds the decimal exponent of a quantity ("1e3"): it
	// lies from -MaxExponent to MaxExponent.
	MaxExponent = 64
)

// Check checks that s is a quantity kiln will parse: the grammar
//
//	[+-] digits [. digits] [suffix]   (at least one digit)
//	suffix: n u m k M G T P E | Ki Mi Gi Ti Pi Ei | e or E, [+-], digits
//
// at most MaxQuantityLen bytes long, with a decimal exponent within
// ±MaxExponent. It takes time linear in len(s) and stops at the first
// byte that does not fit. A malformed quantity is KLN-1010, one too long
// or with too large an exponent KLN-1023; the error has no field set.
func Check(s string) error {
	rest, digits := number(s)
	if digits == 0 {
		return notQuantity(s)
	}
	exp, ok := suffix(rest)
	switch {
	case !ok:
		return notQuantity(s)
	case len(s) > MaxQuantityLen:
		return apiv1.Errorf(apiv1.CodeOutOfRange, fmt.Sprintf("a quantity of %d characters is too long: at most %d are allowed", len(s), MaxQuantityLen))
	case exp > MaxExponent || exp < -MaxExponent:
		return apiv1.Errorf(apiv1.CodeOutOfRange, fmt.Sprintf("%s has an exponent kiln will not expand: exponents lie from -%d to %d", Quote(s), MaxExponent, MaxExponent))
	}
	return nil
}

// number skips an optional sign, digits and a fraction, and returns what
// follows and how many digits it skipped.
func number(s string) (rest string, digits int) {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	n := countDigits(s)
	s, digits = s[n:], n
	if s != "" && s[0] == '.' {
		n = countDigits(s[1:])
		s, digits = s[1+n:], digits+n
	}
	return s, digits
}

func countDigits(s string) int {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return i
		}
	}
	return len(s)
}

// suffix checks a quantity's suffix and returns its decimal exponent
// (0 for the named suffixes; they are small). An exponent with more
// digits than any allowed one reads as MaxExponent+1.
func suffix(s string) (exp int, ok bool) {
	switch s {
	case "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei":
		return 0, true
	}
	if s[0] != 'e' && s[0] != 'E' {
		return 0, false
	}
	s = s[1:]
	sign := 1
	if s != "" && (s[0] == '+' || s[0] == '-') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	if s == "" || countDigits(s) != len(s) {
		return 0, false
	}
	s = strings.TrimLeft(s, "0")
	if len(s) > 3 {
		return sign * (MaxExponent + 1), true
	}
	for i := range len(s) {
		exp = exp*10 + int(s[i]-'0')
	}
	return sign * exp, true
}

func notQuantity(s string) error {
	return apiv1.Errorf(apiv1.CodeQuantity, Quote(s)+" is not a quantity")
}

// Quote quotes s for a message, shortened to its first 40 bytes when it
// is longer, so that a huge value does not make a huge message.
func Quote(s string) string {
	const most = 40
	if len(s) <= most {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:most], len(s))
}

// bounded parses s, which Check allows, and checks that it lies from 0
// to most; what says what it measures, for the message ("CPUs"), and
// shown formats most as it is written.
func bounded(s string, most resource.Quantity, what, shown string) (resource.Quantity, error) {
	if err := Check(s); err != nil {
		return resource.Quantity{}, err
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return q, notQuantity(s)
	}
	if q.Sign() < 0 || q.Cmp(most) > 0 {
		return q, apiv1.Errorf(apiv1.CodeOutOfRange, fmt.Sprintf("%s is out of range: %s lie from 0 to %s", Quote(s), what, shown))
	}
	return q, nil
}
