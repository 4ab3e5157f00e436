package slurm

import "kiln.dev/kiln/internal/backend"

// Name is the Slurm backend's kind, as --backend names it.
const Name = "slurm"

var (
	_ backend.Named          = (*Backend)(nil)
	_ backend.SharedAttempts = (*Backend)(nil)
)

// Name implements backend.Named.
func (*Backend) Name() string { return Name }

// SharesAttempts implements backend.SharedAttempts: the cluster's
// controller holds the jobs and Config.Dir, on the filesystem the
// cluster shares, holds their records, so an engine on any machine that
// reaches both adopts them.
func (*Backend) SharesAttempts() {}
