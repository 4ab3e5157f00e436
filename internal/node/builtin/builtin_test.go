package builtin

import (
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestRegistryRunsEveryKindAWorkflowCompilesTo(t *testing.T) {
	t.Parallel()
	r := Registry()
	for _, kind := range []apiv1.NodeKind{
		apiv1.NodeKindCommand, apiv1.NodeKindTrain, apiv1.NodeKindMap, apiv1.NodeKindDynamic,
		apiv1.NodeKindSubworkflow, apiv1.NodeKindGate, apiv1.NodeKindExit,
	} {
		h, err := r.For(kind)
		if err != nil || h.Kind() != kind {
			t.Errorf("For(%q) = %v, %v", kind, h, err)
		}
	}
	if _, err := r.For("cron"); err == nil {
		t.Error("a kind no handler runs was found")
	}
}
