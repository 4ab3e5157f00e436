package cli

import (
	"context"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"kiln.dev/kiln/internal/backend/local"
)

// newSuperviseCmd is the hidden mode the local backend starts: the one
// long-lived process per kiln home that forks and waits on attempts.
func newSuperviseCmd(e *env) *cobra.Command {
	var idle time.Duration
	cmd := &cobra.Command{
		Use:    "supervise",
		Short:  "Run the local supervisor (started by kiln itself)",
		Hidden: true,
		Args:   none("kiln supervise takes no arguments (kiln starts it itself)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
			defer stop()
			signal.Ignore(syscall.SIGINT, syscall.SIGHUP)
			return local.Serve(ctx, local.ServeConfig{Home: e.home, IdleTimeout: idle})
		},
	}
	cmd.Flags().DurationVar(&idle, "idle-timeout", 10*time.Minute, "exit after this long with nothing to do")
	return cmd
}
