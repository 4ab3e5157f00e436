package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"kiln.dev/kiln/internal/fetch"
	"kiln.dev/kiln/internal/node/initializer"
)

// newInitializeCmd is the hidden command a training job's initializer
// node runs: it fetches a storageUri into $KILN_INITIALIZER_DIR. Its exit
// code says how it failed, for the node's verdict.
func newInitializeCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:    "initialize NAME URI",
		Short:  "Fetch a training job's dataset or model (run by kiln itself)",
		Hidden: true,
		Args:   between(2, 2, "kiln initialize takes the initializer's name and URI (kiln runs it itself)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := os.Getenv(initializer.DirEnv)
			if dir == "" {
				return usagef("%s is not set: kiln initialize runs as a training job's initializer", initializer.DirEnv)
			}
			s, err := fetch.Parse(args[1])
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "fetching %s into %s\n", args[1], dir)
			err = fetch.Fetch(cmd.Context(), s, dir, os.Getenv(initializer.TokenEnv))
			if err != nil {
				fmt.Fprintf(e.stderr, "error: the %s initializer: %v\n", args[0], err)
				return &exitError{code: initializeExit(err)}
			}
			linkOutput(args[0], dir)
			fmt.Fprintf(e.stderr, "fetched %s\n", args[1])
			return nil
		},
	}
}

func initializeExit(err error) int {
	switch {
	case errors.Is(err, fetch.ErrNotFound):
		return initializer.ExitNotFound
	case errors.Is(err, fetch.ErrUnreachable):
		return initializer.ExitUnreachable
	}
	return initializer.ExitFailed
}

// linkOutput makes $KILN_OUTPUTS/NAME name the directory fetched into,
// when that is elsewhere (a container backend's shared workspace), so
// the node's declared artifact is there.
func linkOutput(name, dir string) {
	out := os.Getenv("KILN_OUTPUTS")
	if out == "" {
		return
	}
	link := filepath.Join(out, name)
	if filepath.Clean(link) == filepath.Clean(dir) {
		return
	}
	_ = os.MkdirAll(out, 0o755)
	_ = os.Symlink(dir, link)
}
