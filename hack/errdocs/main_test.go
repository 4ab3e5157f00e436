package main

import (
	"os"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestDocsAreGenerated(t *testing.T) {
	t.Parallel()
	got, err := os.ReadFile("../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != render() {
		t.Error("docs/errors.md is stale: run go generate ./...")
	}
}

func TestCodesAreUniqueAndWellFormed(t *testing.T) {
	t.Parallel()
	seen := map[apiv1.Code]bool{}
	for _, c := range apiv1.CodeInfos() {
		if seen[c.Code] {
			t.Errorf("code %s is registered twice", c.Code)
		}
		seen[c.Code] = true
		if len(c.Code) != 8 || c.Code[:4] != "KLN-" || groups[c.Code[4]] == "" || c.Meaning == "" {
			t.Errorf("code %+v is not KLN- and four digits in a known group, with a meaning", c)
		}
	}
}
