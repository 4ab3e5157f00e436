package training

import (
	"slices"
	"testing"
)

func TestWithUnbuffered(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ env, want []string }{
		"added":                       {[]string{"A=1"}, []string{"A=1", "PYTHONUNBUFFERED=1"}},
		"the user's value is kept":    {[]string{"PYTHONUNBUFFERED=0", "A=1"}, []string{"PYTHONUNBUFFERED=0", "A=1"}},
		"an empty user value is kept": {[]string{"PYTHONUNBUFFERED="}, []string{"PYTHONUNBUFFERED="}},
		"a longer name is not it":     {[]string{"PYTHONUNBUFFEREDX=1"}, []string{"PYTHONUNBUFFEREDX=1", "PYTHONUNBUFFERED=1"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := WithUnbuffered(tc.env); !slices.Equal(got, tc.want) {
				t.Errorf("WithUnbuffered(%v) = %v, want %v", tc.env, got, tc.want)
			}
		})
	}
}
