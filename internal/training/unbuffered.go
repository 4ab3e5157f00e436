package training

import "strings"

// Unbuffered is the variable that makes Python write its output as it
// goes, so that a trainer's logs and progress reach kiln (and the pod log)
// while it runs and are not lost in a buffer when a rank is killed.
const Unbuffered = "PYTHONUNBUFFERED"

// WithUnbuffered returns env with PYTHONUNBUFFERED=1 added unless env
// already sets it: the user's own value, whatever it is, is kept.
//
// Kubeflow's training operator sets PYTHONUNBUFFERED in every container of
// a PyTorchJob's and a JAXJob's pods (pkg/controller.v1/pytorch/envvar.go,
// .../jax/envvar.go), appended after the user's variables. kiln sets it
// for every framework's processes, on every backend, since it cannot tell
// whether a command is Python (a plain job's python3 train.py) and the
// variable changes nothing for other programs. It goes into every process
// (each container of a pod) kiln starts, never into a pod template's sidecars.
// Python reads any non-empty value as on; kiln writes "1", as the operator
// does for JAX (its PyTorch code writes "0", which Python reads the same).
func WithUnbuffered(env []string) []string { return withDefault(env, Unbuffered, "1") }

// withDefault returns env with key=value added unless env sets key.
func withDefault(env []string, key, value string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, key+"=") {
			return env
		}
	}
	return with(env, key, value)
}
