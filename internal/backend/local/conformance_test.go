package local_test

import (
	"testing"

	"kiln.dev/kiln/internal/backend/backendtest"
	"kiln.dev/kiln/internal/backend/local/localtest"
)

func TestBackendConformance(t *testing.T) {
	t.Parallel()
	backendtest.Run(t, func(t *testing.T) backendtest.Harness { return localtest.NewHarness(t) })
}
