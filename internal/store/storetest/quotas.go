package storetest

import (
	"errors"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

func testQuotas(t *testing.T, s store.Store) {
	ctx := t.Context()
	no := false
	a := apiv1.ProjectQuota{Metadata: apiv1.QuotaMetadata{Name: "team-a"}, Spec: apiv1.ProjectQuotaSpec{
		CPU: "4", Memory: "8Gi", Runs: 3, Weight: 2, Borrowing: &no, Preemption: apiv1.PreemptLowerPriority,
	}}
	b := apiv1.ProjectQuota{Metadata: apiv1.QuotaMetadata{Name: "team-b"}, Spec: apiv1.ProjectQuotaSpec{GPU: "1"}}
	for _, q := range []apiv1.ProjectQuota{b, a} {
		if changed, err := s.PutQuota(ctx, q, t0); err != nil || !changed {
			t.Fatalf("PutQuota(%s) = %v, %v; want a new quota", q.Metadata.Name, changed, err)
		}
	}
	got, err := s.GetQuota(ctx, "team-a")
	if err != nil || got.Spec.CPU != "4" || got.Spec.Runs != 3 || got.Spec.Weight != 2 || got.Spec.MayBorrow() ||
		got.Spec.Preemption != apiv1.PreemptLowerPriority || !got.Status.CreatedAt.Equal(t0) || got.Kind != apiv1.KindProjectQuota {
		t.Errorf("GetQuota(team-a) = %+v, %v; want it as stored at t0", got, err)
	}
	if list, err := s.ListQuotas(ctx); err != nil || len(list) != 2 || list[0].Metadata.Name != "team-a" || list[1].Spec.GPU != "1" {
		t.Errorf("ListQuotas = %+v, %v; want team-a, team-b", list, err)
	}
	// Storing the same spec again changes nothing; a new spec keeps CreatedAt.
	later := t0.Add(time.Hour)
	if changed, err := s.PutQuota(ctx, b, later); err != nil || changed {
		t.Errorf("PutQuota(same) = %v, %v; want unchanged", changed, err)
	}
	b.Spec.GPU = "2"
	if changed, err := s.PutQuota(ctx, b, later); err != nil || !changed {
		t.Errorf("PutQuota(new gpu) = %v, %v; want changed", changed, err)
	}
	if got, err := s.GetQuota(ctx, "team-b"); err != nil || got.Spec.GPU != "2" || !got.Status.CreatedAt.Equal(t0) || !got.Status.UpdatedAt.Equal(later) {
		t.Errorf("GetQuota(team-b) = %+v, %v; want gpu 2, created t0, updated an hour later", got, err)
	}
	if err := s.DeleteQuota(ctx, "team-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetQuota(ctx, "team-a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetQuota(deleted) = %v; want ErrNotFound", err)
	}
	if err := s.DeleteQuota(ctx, "team-a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteQuota twice = %v; want ErrNotFound", err)
	}
}
