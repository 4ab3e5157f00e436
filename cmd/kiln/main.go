// Command kiln runs machine-learning pipelines and distributed training jobs.
package main

import (
	"os"

	"kiln.dev/kiln/internal/backend/local"
	"kiln.dev/kiln/internal/cli"
)

func main() {
	local.RunSandboxIfAsked()
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
