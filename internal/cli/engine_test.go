package cli

import (
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
)

// The pool flags take what a task may ask for, and no more: a value
// beyond the bounds is a usage error naming the flag, found at once.
func TestPoolFlagsAreBounded(t *testing.T) {
	t.Parallel()

	cases := map[string]struct {
		flags poolFlags
		want  resource.Request
		says  string
	}{
		"sizes within the bounds":        {flags: poolFlags{cpus: "100000", memory: "1Ei", gpus: 100000}, want: resource.Request{MilliCPU: resource.MaxMilliCPU, Memory: resource.MaxMemory, GPU: resource.MaxGPU}},
		"an exponent that would hang":    {flags: poolFlags{cpus: "1E2147483648"}, says: "--cpus"},
		"the largest int64 of CPUs":      {flags: poolFlags{cpus: "9223372036854775807"}, says: "--cpus"},
		"memory past 1Ei":                {flags: poolFlags{memory: "1e400"}, says: "--memory"},
		"no memory":                      {flags: poolFlags{memory: "0"}, says: "--memory"},
		"negative GPUs":                  {flags: poolFlags{gpus: -1}, says: "--gpus"},
		"more GPUs than any machine has": {flags: poolFlags{gpus: 1 << 62}, says: "--gpus"},
		"a quantity that is not one":     {flags: poolFlags{cpus: "lots"}, says: "--cpus"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.flags.request()
			if tc.says == "" {
				if err != nil || got != tc.want {
					t.Errorf("request() = %v, %v; want %v", got, err, tc.want)
				}
				return
			}
			if apiv1.CodeOf(err) != apiv1.CodeUsage || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("request() = %v; want %s naming %s", err, apiv1.CodeUsage, tc.says)
			}
		})
	}
}
