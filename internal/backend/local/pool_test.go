package local

import (
	"context"
	"os"
	"syscall"
	"testing"

	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/resource/pooltest"
)

// The supervisor's ledger is the pool every engine on a home shares: each
// pool here is a backend of its own, one engine's connection.
func TestPoolConformance(t *testing.T) {
	t.Parallel()
	pooltest.Run(t, func(t *testing.T, capacity resource.Request, n int) []pooltest.Pool {
		home := t.TempDir()
		out := make([]pooltest.Pool, n)
		backends := make([]*Backend, n)
		for i := range out {
			backends[i] = New(Config{Home: home, SupervisorCommand: []string{"/usr/bin/env", "KILN_TEST_SUPERVISOR_HOME=" + home, os.Args[0]}})
			out[i] = backends[i].Pool(capacity)
		}
		t.Cleanup(func() {
			if info, err := backends[0].Supervisor(context.Background()); err == nil {
				_ = syscall.Kill(info.PID, syscall.SIGKILL)
			}
			for _, b := range backends {
				b.Close()
			}
		})
		return out
	})
}
