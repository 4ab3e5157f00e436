package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestBinaryLeavesOutEveryGroupsClients lists the packages linked into
// kiln and fails on those whose package initialisation registers every
// Kubernetes API group (client-go's clientset, typed informers and their
// scheme, reached through dynamicinformer among others): every kiln
// process, a one-task run and its supervisor too, ran them at start, in
// all about half of its start-up. The kube backend reaches the cluster
// through a core/v1 REST client and the dynamic client instead.
func TestBinaryLeavesOutEveryGroupsClients(t *testing.T) {
	t.Parallel()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	heavy := []string{
		"k8s.io/client-go/kubernetes",
		"k8s.io/client-go/kubernetes/scheme",
		"k8s.io/client-go/informers",
		"k8s.io/client-go/dynamic/dynamicinformer",
	}
	linked := strings.Fields(string(out))
	for _, p := range heavy {
		if slices.Contains(linked, p) {
			t.Errorf("kiln links %s: find its importer with `go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/kiln | grep %s`", p, p)
		}
	}
	if len(linked) < 100 {
		t.Fatalf("go list -deps listed %d packages: %s", len(linked), out)
	}
}
