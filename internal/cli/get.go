package cli

import (
	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newGetCmd(e *env) *cobra.Command {
	get := group("get", "List resources")
	runs := newGetRunsCmd(e)
	get.AddCommand(runs, newGetRuntimesCmd(e), newGetTemplatesCmd(e), newGetTrainJobCmd(e), newGetSchedulesCmd(e), newGetQuotasCmd(e))
	return get
}

func framework(p *apiv1.MLPolicy) string {
	switch {
	case p == nil:
		return "-"
	case p.Torch != nil:
		return "torch"
	case p.MPI != nil:
		return "mpi"
	case p.XGBoost != nil:
		return "xgboost"
	case p.TensorFlow != nil:
		return "tensorflow"
	case p.JAX != nil:
		return "jax"
	case p.Plain != nil:
		return "plain"
	case p.Paddle != nil:
		return "paddle"
	}
	return "-"
}
