package who

import (
	"context"
	"testing"
)

func TestWhoAsks(t *testing.T) {
	t.Parallel()
	base := context.Background()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"nobody", base, ""},
		{"named", With(base, "ann (token t1, admin)"), "ann (token t1, admin)"},
		{"or keeps a name", Or(With(base, "ann"), "root"), "ann"},
		{"or names when none", Or(base, "root"), "root"},
		{"the last name wins", With(With(base, "ann"), "schedule nightly"), "schedule nightly"},
	} {
		if got := Asks(tc.ctx); got != tc.want {
			t.Errorf("%s: Asks = %q, want %q", tc.name, got, tc.want)
		}
	}
}
