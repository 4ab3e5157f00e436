package local

import "kiln.dev/kiln/internal/backend"

// Name is the local backend's kind, as --backend names it.
const Name = "local"

var _ backend.Named = (*Backend)(nil)

// Name implements backend.Named.
func (*Backend) Name() string { return Name }
