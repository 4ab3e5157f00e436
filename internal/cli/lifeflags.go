package cli

import (
	"time"

	"github.com/spf13/cobra"

	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/store"
)

// lifeFlags say how kiln serve's engine collects runs.
type lifeFlags struct {
	every     time.Duration
	succeeded int
	failed    int
}

func (l *lifeFlags) add(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&l.every, "gc-interval", app.DefaultGCInterval,
		"how often to delete runs past their ttlSecondsAfterFinished or over their history limit, and orphan run directories")
	l.addHistory(cmd)
}

func (l *lifeFlags) addHistory(cmd *cobra.Command) {
	cmd.Flags().IntVar(&l.succeeded, "history-succeeded", -1,
		"keep only this many newest Succeeded runs of each workflow name and project whose spec sets no historyLimit (-1: all)")
	cmd.Flags().IntVar(&l.failed, "history-failed", -1,
		"keep only this many newest Failed or Cancelled runs of each workflow name and project whose spec sets no historyLimit (-1: all)")
}

// apply checks the flags and sets them in cfg.
func (l *lifeFlags) apply(cfg *app.Config) (err error) {
	if l.every <= 0 {
		return usagef("--gc-interval %s is not a positive duration such as 1m", l.every)
	}
	cfg.GCInterval = l.every
	cfg.History, err = l.history()
	return err
}

// history is the default history limit the flags ask for; nil keeps all.
func (l *lifeFlags) history() (*store.HistoryLimit, error) {
	for _, f := range []struct {
		name string
		n    int
	}{{"--history-succeeded", l.succeeded}, {"--history-failed", l.failed}} {
		if f.n < -1 {
			return nil, usagef("%s %d is out of range: a number of runs to keep, or -1 to keep all", f.name, f.n)
		}
	}
	if l.succeeded < 0 && l.failed < 0 {
		return nil, nil
	}
	return &store.HistoryLimit{Succeeded: l.succeeded, Failed: l.failed}, nil
}
