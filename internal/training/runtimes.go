package training

import (
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Builtin returns the runtimes kiln ships: ClusterTrainingRuntimes that
// a stored ClusterTrainingRuntime, the project's TrainingRuntime or one
// of the submitted files of the same name overrides (see Runtimes).
func Builtin() []apiv1.TrainingRuntime {
	one := int32(1)
	rt := func(name string, p apiv1.MLPolicy) apiv1.TrainingRuntime {
		p.NumNodes = &one
		return apiv1.TrainingRuntime{
			TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: apiv1.KindClusterTrainingRuntime},
			Metadata: apiv1.ObjectMeta{Name: name, Labels: map[string]string{"kiln.dev/builtin": "true"}},
			Spec:     apiv1.TrainingRuntimeSpec{MLPolicy: &p},
			Status:   &apiv1.RuntimeStatus{Source: apiv1.RuntimeSourceBuiltin},
		}
	}
	auto := apiv1.Quantity("auto")
	return []apiv1.TrainingRuntime{
		rt("torch-distributed", apiv1.MLPolicy{Torch: &apiv1.TorchPolicy{NumProcPerNode: &auto}}),
		rt("mpi", apiv1.MLPolicy{MPI: &apiv1.MPIPolicy{NumProcPerNode: &one}}),
		rt("xgboost", apiv1.MLPolicy{XGBoost: &apiv1.XGBoostPolicy{}}),
		rt("tensorflow", apiv1.MLPolicy{TensorFlow: &apiv1.TensorFlowPolicy{}}),
		rt("jax", apiv1.MLPolicy{JAX: &apiv1.JAXPolicy{}}),
		rt("plain", apiv1.MLPolicy{Plain: &apiv1.PlainPolicy{}}),
		// The names Kubeflow Trainer's own runtimes have, so its users'
		// TrainJobs find them (torch-distributed is the same name).
		rt("jax-distributed", apiv1.MLPolicy{JAX: &apiv1.JAXPolicy{}}),
		rt("xgboost-distributed", apiv1.MLPolicy{XGBoost: &apiv1.XGBoostPolicy{}}),
	}
}

// Frameworks lists, in order, which framework sources a policy sets; a
// valid policy sets exactly one.
func Frameworks(p *apiv1.MLPolicy) []string {
	var names []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"torch", p.Torch != nil},
		{"mpi", p.MPI != nil},
		{"xgboost", p.XGBoost != nil},
		{"tensorflow", p.TensorFlow != nil},
		{"jax", p.JAX != nil},
		{"plain", p.Plain != nil},
		{"paddle", p.Paddle != nil},
	} {
		if f.set {
			names = append(names, f.name)
		}
	}
	return names
}
