package workflow

import (
	"testing"
	"time"
)

// The largest factor over the most retries waits a year at most, never a
// duration that overflowed into the past.
func TestDelayNeverOverflows(t *testing.T) {
	t.Parallel()
	r := Retry{Limit: maxRetries, Backoff: maxDuration, Factor: maxFactor}
	for next := 2; next <= maxRetries+1; next++ {
		if d := r.Delay(next); d <= 0 || d > maxDuration {
			t.Fatalf("Delay(%d) = %v, want from 0 to %v", next, d, maxDuration)
		}
	}
	capped := Retry{Limit: 3, Backoff: time.Second, Factor: 2, Max: 3 * time.Second}
	if got := []time.Duration{capped.Delay(2), capped.Delay(3), capped.Delay(4)}; got[0] != time.Second || got[1] != 2*time.Second || got[2] != 3*time.Second {
		t.Errorf("delays = %v, want 1s 2s 3s", got)
	}
}
