package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"kiln.dev/kiln/internal/memtest"
)

// bigWorkflow is a valid Workflow of about size bytes whose one task has
// a command of many one-letter words: the densest YAML, a node per two
// bytes, so the costliest submission of its size to read and check.
func bigWorkflow(size int) string {
	head := "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: big}\nspec:\n  tasks:\n  - {name: t, command: [a"
	n := max(0, (size-len(head)-3)/2)
	return head + strings.Repeat(",a", n) + "]}\n"
}

// BenchmarkSubmitMaxBody measures what one submission of the largest
// body the server accepts costs: bytes allocated (B/op) and the peak of
// the live heap while it is read, parsed and stored (peak-MiB).
//
//	go test -run '^$' -bench SubmitMaxBody -benchtime 3x ./internal/server
func BenchmarkSubmitMaxBody(b *testing.B) {
	for _, size := range []int64{1 << 20, 4 << 20} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			e := newEnvWith(b, func(c *Config) { c.Limits.MaxBody = size })
			body := bigWorkflow(int(size) - 1)
			b.ReportAllocs()
			var peak uint64
			for b.Loop() {
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				stop := memtest.SamplePeak(&peak, before.HeapAlloc)
				req := httptest.NewRequest("POST", "/api/v1/runs", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+e.admin)
				w := httptest.NewRecorder()
				e.srv.Handler().ServeHTTP(w, req)
				stop()
				if w.Code != http.StatusCreated {
					b.Fatalf("submit: %d %.300s", w.Code, w.Body)
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
		})
	}
}
