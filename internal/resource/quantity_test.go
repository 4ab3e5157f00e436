package resource_test

import (
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
)

func TestParseBounds(t *testing.T) {
	t.Parallel()

	type parser func(string) (int64, error)
	cases := map[string]struct {
		parse    parser
		in       string
		want     int64
		wantCode apiv1.Code
	}{
		"millicores":                          {parse: resource.ParseCPU, in: "500m", want: 500},
		"a fraction of a core":                {parse: resource.ParseCPU, in: ".5", want: 500},
		"a tiny amount rounds up":             {parse: resource.ParseCPU, in: "1e-9", want: 1},
		"the most CPUs":                       {parse: resource.ParseCPU, in: "100000", want: resource.MaxMilliCPU},
		"one millicore too many":              {parse: resource.ParseCPU, in: "100000001m", wantCode: apiv1.CodeOutOfRange},
		"the largest int64 in CPUs":           {parse: resource.ParseCPU, in: "9223372036854775807", wantCode: apiv1.CodeOutOfRange},
		"an exponent past int32":              {parse: resource.ParseCPU, in: "1E2147483648", wantCode: apiv1.CodeOutOfRange},
		"an exponent past int64":              {parse: resource.ParseCPU, in: "1e9223372036854775807", wantCode: apiv1.CodeOutOfRange},
		"a negative exponent past the bound":  {parse: resource.ParseCPU, in: "1e-65", wantCode: apiv1.CodeOutOfRange},
		"an exponent with leading zeros":      {parse: resource.ParseCPU, in: "1e0003", want: 1_000_000},
		"negative CPUs":                       {parse: resource.ParseCPU, in: "-1", wantCode: apiv1.CodeOutOfRange},
		"negative zero":                       {parse: resource.ParseCPU, in: "-0", want: 0},
		"a suffix alone":                      {parse: resource.ParseCPU, in: "m", wantCode: apiv1.CodeQuantity},
		"a sign alone":                        {parse: resource.ParseCPU, in: "-", wantCode: apiv1.CodeQuantity},
		"a point alone":                       {parse: resource.ParseCPU, in: ".", wantCode: apiv1.CodeQuantity},
		"space around":                        {parse: resource.ParseCPU, in: " 1", wantCode: apiv1.CodeQuantity},
		"an exponent without digits":          {parse: resource.ParseCPU, in: "1e", wantCode: apiv1.CodeQuantity},
		"a long quantity":                     {parse: resource.ParseCPU, in: "0." + strings.Repeat("0", 70) + "1", wantCode: apiv1.CodeOutOfRange},
		"bytes":                               {parse: resource.ParseBytes, in: "2Gi", want: 2 << 30},
		"the most memory":                     {parse: resource.ParseBytes, in: "1Ei", want: resource.MaxMemory},
		"more than the most memory":           {parse: resource.ParseBytes, in: "2Ei", wantCode: apiv1.CodeOutOfRange},
		"memory written as a huge number":     {parse: resource.ParseBytes, in: "1e400", wantCode: apiv1.CodeOutOfRange},
		"memory of exactly 1e18":              {parse: resource.ParseBytes, in: "1e18", want: 1_000_000_000_000_000_000},
		"memory in a misspelt unit":           {parse: resource.ParseBytes, in: "2Gb", wantCode: apiv1.CodeQuantity},
		"whole GPUs":                          {parse: resource.ParseCount, in: "8", want: 8},
		"GPUs in exponent form":               {parse: resource.ParseCount, in: "1e3", want: 1000},
		"half a GPU":                          {parse: resource.ParseCount, in: "0.5", wantCode: apiv1.CodeQuantity},
		"too many GPUs":                       {parse: resource.ParseCount, in: "100001", wantCode: apiv1.CodeOutOfRange},
		"negative GPUs":                       {parse: resource.ParseCount, in: "-1", wantCode: apiv1.CodeOutOfRange},
		"GPUs named by a word":                {parse: resource.ParseCount, in: "x", wantCode: apiv1.CodeQuantity},
		"a unicode digit is not a digit":      {parse: resource.ParseCount, in: "１", wantCode: apiv1.CodeQuantity},
		"a quantity with a trailing NUL byte": {parse: resource.ParseCount, in: "1\x00", wantCode: apiv1.CodeQuantity},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.parse(tc.in)
			if code := apiv1.CodeOf(err); code != tc.wantCode || (err == nil && got != tc.want) {
				t.Errorf("parse(%q) = %d, %v; want %d, code %q", tc.in, got, err, tc.want, tc.wantCode)
			}
		})
	}
}

// A quantity crafted to make the parser work hard is refused like any
// other: a parser that stepped through the exponent would not return,
// and the package's timeout would name this test.
func TestParseRefusesCraftedQuantities(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"1E2147483648", "1e-2147483648", "1e9223372036854775807", strings.Repeat("9", 1<<20), "1e" + strings.Repeat("9", 1<<20)} {
		if _, err := resource.ParseBytes(s); apiv1.CodeOf(err) != apiv1.CodeOutOfRange {
			t.Errorf("ParseBytes(%s) = %v, want %s", resource.Quote(s), err, apiv1.CodeOutOfRange)
		}
	}
}

// FuzzParse checks that no input panics, that what is accepted lies in
// its bounds, and that refusals are coded.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "500m", "2Gi", "1e3", "1E2147483648", "-1", ".5", "1.G", "9223372036854775807", "8Ei", "1e-64", "+1E+5", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []struct {
			parse func(string) (int64, error)
			most  int64
		}{{resource.ParseCPU, resource.MaxMilliCPU}, {resource.ParseBytes, resource.MaxMemory}, {resource.ParseCount, resource.MaxGPU}} {
			n, err := p.parse(s)
			switch {
			case err != nil:
				if c := apiv1.CodeOf(err); c != apiv1.CodeQuantity && c != apiv1.CodeOutOfRange {
					t.Errorf("parse(%q) = %v, want KLN-1010 or KLN-1023", s, err)
				}
			case n < 0 || n > p.most:
				t.Errorf("parse(%q) = %d, out of 0 to %d", s, n, p.most)
			}
		}
	})
}
