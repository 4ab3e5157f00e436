package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
)

func newRunCmd(e *env) *cobra.Command {
	var pool poolFlags
	var params []string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "run FILE...",
		Short: "Submit a workflow and watch it until it ends",
		Long: "Submit the one runnable resource in FILE... and watch it. Exits 0 only if the run succeeded.\n" +
			"Ctrl-C cancels the run cleanly; a second Ctrl-C leaves at once, and kiln resume picks the run up.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			given, err := parseParams(params)
			if err != nil {
				return err
			}
			loaded, err := app.Load(files, given)
			if err != nil {
				return err
			}
			a, err := openEngine(cmd.Context(), e, &pool)
			if err != nil {
				return err
			}
			defer a.Close()
			a.Start()
			id, err := a.Submit(cmd.Context(), loaded)
			if err != nil {
				return err
			}
			return watchRuns(e, a, []apiv1.RunID{id}, quiet)
		},
	}
	pool.add(cmd)
	cmd.Flags().StringArrayVarP(&params, "param", "p", nil, "set a workflow parameter, name=value (repeatable)")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the final summary")
	return cmd
}

func parseParams(pairs []string) (map[string]string, error) {
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		name, value, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return nil, usagef("-p %q is not name=value", p)
		}
		out[name] = value
	}
	return out, nil
}

func newResumeCmd(e *env) *cobra.Command {
	var pool poolFlags
	var quiet bool
	cmd := &cobra.Command{
		Use:   "resume [RUN...]",
		Short: "Continue unfinished runs whose engine is gone, and watch them until they end",
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openEngine(cmd.Context(), e, &pool)
			if err != nil {
				return err
			}
			defer a.Close()
			a.Start()
			ids := make([]apiv1.RunID, len(args))
			for i, arg := range args {
				ids[i] = apiv1.RunID(arg)
			}
			claimed, err := a.Claim(cmd.Context(), ids...)
			if err != nil {
				return err
			}
			if len(claimed) == 0 {
				fmt.Fprintln(e.stdout, "no unfinished runs without a live engine")
				return nil
			}
			fmt.Fprintf(e.stdout, "resuming %d runs\n", len(claimed))
			return watchRuns(e, a, claimed, quiet)
		},
	}
	pool.add(cmd)
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the final summary")
	return cmd
}

// watchRuns shows the runs until they end, cancelling them on the first
// Ctrl-C and leaving on the second. It returns an exitError unless every
// run succeeded.
func watchRuns(e *env, a *app.App, ids []apiv1.RunID, quiet bool) error {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	go func() {
		<-sig
		fmt.Fprintln(e.stderr, "cancelling (press Ctrl-C again to leave now; kiln resume picks the runs up)")
		for _, id := range ids {
			_ = a.Controller.Cancel(ctx, id)
		}
		<-sig
		leave()
	}()
	w := newWatcher(e, a, quiet)
	ok, err := w.watch(ctx, ids)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return &exitError{exitAborted}
	}
	if !ok {
		return &exitError{exitFailed}
	}
	return nil
}
