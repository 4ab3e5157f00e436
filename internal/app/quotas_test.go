package app

import (
	"slices"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func applyQuotaFile(t *testing.T, a *App, text string) (*apiv1.ApplyResult, error) {
	t.Helper()
	return a.Apply(t.Context(), apiv1.TemplateApply{AllProjects: true, Files: []apiv1.SourceFile{{Name: "bq.yaml", Data: []byte(text)}}})
}

const quotaHead = "apiVersion: kiln.dev/v1alpha1\nkind: ProjectQuota\nmetadata: {name: tiny}\n"

func TestABadQuotaFileIsRefusedForItsOwnFaultsOnly(t *testing.T) {
	t.Parallel()
	a := openParty(t, "")
	_, err := applyQuotaFile(t, a, quotaHead+"spec: {weight: 0, runs: -1, preemption: Always}\n")
	errs := apiv1.Errors(err)
	if len(errs) != 2 || slices.ContainsFunc(errs, func(e *apiv1.Error) bool { return e.Code != apiv1.CodeQuotaValue }) {
		t.Fatalf("applying a bad quota = %v; want only its two KLN-1081 errors (runs, preemption), no word of WorkflowTemplates", err)
	}
	for _, e := range errs {
		if e.Hint == "" || strings.Contains(e.Hint, "quantit") || !strings.Contains(e.Hint, strings.TrimPrefix(e.Field, "spec.")) {
			t.Errorf("%s: hint %q; want one about %s itself", e.Field, e.Hint, e.Field)
		}
	}
	if _, err := applyQuotaFile(t, a, quotaHead+"spec: {weight: 1001}\n"); !strings.Contains(apiv1.Errors(err)[0].Hint, "weight") {
		t.Errorf("weight 1001 = %v; want a hint about weight", err)
	}
}

func TestQuotaQuantitiesMayBeYAMLNumbers(t *testing.T) {
	t.Parallel()
	a := openParty(t, "")
	if _, err := applyQuotaFile(t, a, quotaHead+"spec: {cpu: 1, memory: 1073741824, gpu: 2}\n"); err != nil {
		t.Fatalf("a quota of cpu: 1, unquoted: %v", err)
	}
	q, err := a.Store.GetQuota(t.Context(), "tiny")
	if err != nil || q.Spec.CPU != "1" || q.Spec.Memory != "1073741824" || q.Spec.GPU != "2" {
		t.Fatalf("stored quota %+v, %v; want cpu 1, memory 1073741824, gpu 2", q, err)
	}
}
