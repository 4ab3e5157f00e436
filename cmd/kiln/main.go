// Command kiln runs machine-learning pipelines and distributed training jobs.
package main

import (
	"kiln.dev/kiln/internal/backend/local"
	"kiln.dev/kiln/internal/cli"
)

func main() {
	local.RunSandboxIfAsked()
	cli.Exit()
}
