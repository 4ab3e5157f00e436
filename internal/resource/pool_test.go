package resource_test

import (
	"testing"

	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/resource/pooltest"
)

func TestPoolConformance(t *testing.T) {
	t.Parallel()
	pooltest.Run(t, func(t *testing.T, capacity resource.Request, n int) []pooltest.Pool {
		ledger := resource.NewLedger()
		out := make([]pooltest.Pool, n)
		for i := range out {
			out[i] = ledger.Pool(string(rune('a'+i)), capacity)
		}
		return out
	})
}

func TestParse(t *testing.T) {
	t.Parallel()
	if got, err := resource.ParseCPU("500m"); err != nil || got != 500 {
		t.Errorf("ParseCPU(500m) = %d, %v; want 500", got, err)
	}
	if got, err := resource.ParseBytes("2Gi"); err != nil || got != 2<<30 {
		t.Errorf("ParseBytes(2Gi) = %d, %v; want %d", got, err, 2<<30)
	}
	for _, bad := range []string{"1.5", "-1", "x"} {
		if _, err := resource.ParseCount(bad); err == nil {
			t.Errorf("ParseCount(%q) succeeded, want error", bad)
		}
	}
}
