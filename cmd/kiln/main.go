// Command kiln runs machine-learning pipelines and distributed training jobs.
package main

import (
	"os"

	"kiln.dev/kiln/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
