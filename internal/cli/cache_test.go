package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
)

func TestCacheSize(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		file, flag string
		want       int64
		wantCode   apiv1.Code
		wantSays   string
	}{
		"10Gi when nothing sets it":          {want: 10 << 30},
		"the file's cache.maxSize":           {file: "cache: {maxSize: 512Mi}\n", want: 512 << 20},
		"0 in the file is no limit":          {file: "cache: {maxSize: \"0\"}\n", want: 0},
		"the flag over the file":             {file: "cache: {maxSize: 512Mi}\n", flag: "1Gi", want: 1 << 30},
		"a bad flag names it":                {flag: "huge", wantCode: apiv1.CodeUsage, wantSays: "--cache-max-size"},
		"a bad file value names its field":   {file: "cache: {maxSize: huge}\n", wantCode: apiv1.CodeQuantity, wantSays: "cache.maxSize"},
		"an unknown key of the file's cache": {file: "cache: {size: 1Gi}\n", wantCode: apiv1.CodeUnknownField, wantSays: "config.yaml:1:9: cache.size: unknown field (hint: the fields here are maxSize"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			if tc.file != "" {
				if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			e := &env{home: home}
			e.backend.add(pflag.NewFlagSet("kiln", pflag.ContinueOnError))
			var cfg app.Config
			err := e.withCacheSize(&cfg, tc.flag)
			if tc.wantCode != "" {
				if apiv1.CodeOf(err) != tc.wantCode || !strings.Contains(err.Error(), tc.wantSays) {
					t.Errorf("error = %v, want %s naming %s", err, tc.wantCode, tc.wantSays)
				}
				return
			}
			if err != nil || cfg.CacheMaxSize != tc.want {
				t.Errorf("CacheMaxSize = %d, %v; want %d", cfg.CacheMaxSize, err, tc.want)
			}
		})
	}
}

func TestCacheTableCells(t *testing.T) {
	t.Parallel()
	for in, want := range map[int64]string{0: "0B", 1023: "1023B", 1024: "1.0KiB", 1536: "1.5KiB", 10 << 30: "10.0GiB", 3 << 60: "3.0EiB"} {
		if got := humanBytes(in); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", in, got, want)
		}
	}
	if got := shortKey("sha256:0123456789abcdef0123"); got != "0123456789ab" {
		t.Errorf("shortKey = %q, want the first 12 hex digits", got)
	}
	past, future := time.Now().Add(-time.Minute), time.Now().Add(3*time.Hour+time.Minute)
	for _, tc := range []struct {
		at   *time.Time
		want string
	}{{nil, "-"}, {&past, "expired"}, {&future, "in 3h"}} {
		if got := expires(tc.at); got != tc.want {
			t.Errorf("expires(%v) = %q, want %q", tc.at, got, tc.want)
		}
	}
}
