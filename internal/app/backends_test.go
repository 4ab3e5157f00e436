package app

import (
	"errors"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// An unknown backend is a usage error naming every backend of the table.
func TestUnknownBackendListsTheKnownOnes(t *testing.T) {
	_, err := lookupBackend("slurmish")
	var e *apiv1.Error
	if !errors.As(err, &e) || e.Code != apiv1.CodeUsage {
		t.Fatalf("lookupBackend(unknown) = %v, want a %s", err, apiv1.CodeUsage)
	}
	for _, name := range BackendNames() {
		if !strings.Contains(e.Message, name) {
			t.Errorf("the error %q does not name backend %s", e.Message, name)
		}
	}
	if k, err := lookupBackend(""); err != nil || k.probe == nil {
		t.Errorf("the default backend: %v", err)
	}
}

// What kiln validate checks without opening a backend comes from the
// backend's capabilities.
func TestBackendRunsImagesAsItsCapabilitySays(t *testing.T) {
	for name, want := range map[string]bool{BackendLocal: false, BackendKubernetes: true, "": false, "nope": false} {
		if got := BackendRunsImages(name); got != want {
			t.Errorf("BackendRunsImages(%q) = %v, want %v", name, got, want)
		}
	}
}
