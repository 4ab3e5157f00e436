package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"kiln.dev/kiln/internal/server"
)

func TestLimitFlags(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args    []string
		want    func(*server.Limits)
		wantErr []string
	}{
		"the server's defaults, with the body in bytes": {
			want: func(*server.Limits) {},
		},
		"each flag sets its limit": {
			args: []string{
				"--read-header-timeout=2s", "--read-timeout=30s", "--write-timeout=45s", "--idle-timeout=5s",
				"--max-conns=100", "--max-conns-per-client=-1", "--max-body=512Ki", "--max-submits=2",
				"--rate=5", "--burst=10", "--client-rate=-1", "--client-burst=3",
			},
			want: func(l *server.Limits) {
				l.ReadHeaderTimeout, l.ReadTimeout, l.WriteTimeout, l.IdleTimeout = 2*time.Second, 30*time.Second, 45*time.Second, 5*time.Second
				l.MaxConns, l.MaxConnsPerClient, l.MaxBody, l.MaxSubmits = 100, -1, 512<<10, 2
				l.Rate, l.Burst, l.ClientRate, l.ClientBurst = 5, 10, -1, 3
			},
		},
		"every bad value is named": {
			args:    []string{"--max-body=lots", "--idle-timeout=0s", "--max-conns=0", "--rate=-2", "--burst=0"},
			wantErr: []string{"--max-body", "--idle-timeout", "--max-conns", "--rate", "--burst"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := &cobra.Command{}
			f := newLimitFlags()
			f.add(cmd)
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			got, err := f.resolve()
			for _, flag := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), flag) {
					t.Errorf("resolve = %v, want it to name %s", err, flag)
				}
			}
			if tc.wantErr != nil {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := server.DefaultLimits()
			tc.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("limits (-want +got):\n%s", diff)
			}
		})
	}
}
