package pooltest

import (
	"slices"
	"testing"

	"kiln.dev/kiln/internal/controller"
	"kiln.dev/kiln/internal/resource"
)

// testQuotas: the quotas set on one engine's pool bind every engine on
// the book; a claim's project travels with it, and a waiting claim's
// quota reason and preemption victims come back with its answer.
func testQuotas(t *testing.T, newPools NewFunc) {
	pools := newPools(t, cpu2, 2)
	q, ok := pools[0].(controller.QuotaPool)
	if !ok {
		t.Fatal("the pool keeps no quotas (controller.QuotaPool)")
	}
	team := resource.Quota{Nominal: resource.Request{MilliCPU: 1000, Memory: resource.Unlimited, GPU: resource.Unlimited}, Weight: 1, Preempt: true}
	if err := q.SetQuotas(t.Context(), map[string]resource.Quota{"team": team}); err != nil {
		t.Fatal(err)
	}
	of := func(c resource.Claim) resource.Claim { c.Project = "team"; return c }
	if got := admit(t, pools[1], of(claim("a", cpu1, 0))); !got[0] {
		t.Fatal("the project's first cpu was not admitted")
	}
	res, err := pools[1].Admit(t.Context(), nil, []resource.Claim{of(claim("b", cpu1, 0))})
	if err != nil || res[0].Admitted || res[0].Quota == "" {
		t.Fatalf("a claim beyond the project's quota = %+v, %v; want it waiting, with its quota's reason", res, err)
	}
	res, err = pools[1].Admit(t.Context(), nil, []resource.Claim{of(claim("c", cpu1, 5))})
	if err != nil || res[0].Admitted || !slices.Equal(res[0].Preempt, []string{"a/1"}) {
		t.Fatalf("a higher priority beyond the quota = %+v, %v; want it waiting, naming a/1 to evict", res, err)
	}
	if got := admit(t, pools[0], claim("other", cpu1, 0)); !got[0] {
		t.Error("another project was held back by team's quota")
	}
}
