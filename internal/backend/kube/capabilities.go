package kube

import "kiln.dev/kiln/internal/backend"

// Name is the Kubernetes backend's kind, as --backend names it.
const Name = "kubernetes"

var (
	_ backend.Named          = (*Backend)(nil)
	_ backend.Images         = (*Backend)(nil)
	_ backend.SharedAttempts = (*Backend)(nil)
)

// Name implements backend.Named.
func (*Backend) Name() string { return Name }

// RunsImages implements backend.Images: every process runs in a pod.
func (*Backend) RunsImages() {}

// SharesAttempts implements backend.SharedAttempts: the cluster holds the
// pods, and an engine on any machine that reaches it adopts them.
func (*Backend) SharesAttempts() {}
