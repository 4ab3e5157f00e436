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
	"kiln.dev/kiln/client"
	"kiln.dev/kiln/internal/app"
)

func newRunCmd(e *env) *cobra.Command {
	var pool poolFlags
	var params []string
	var quiet bool
	var project string
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
			if c := e.remote(); c != nil {
				return runRemote(cmd.Context(), e, c, files, given, project, quiet)
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
			id, err := a.SubmitTo(cmd.Context(), loaded, project)
			if err != nil {
				return err
			}
			w, stop := embeddedWatcher(e, a, quiet)
			defer stop()
			return watchRuns(e, w, []apiv1.RunID{id}, a.Controller.Cancel)
		},
	}
	pool.add(cmd)
	cmd.Flags().StringVar(&project, "project", "", "the project the run belongs to (default \"default\")")
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
			if e.remote() != nil {
				return usagef("kiln serve adopts unfinished runs itself; resume is for the embedded engine")
			}
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
			w, stop := embeddedWatcher(e, a, quiet)
			defer stop()
			return watchRuns(e, w, claimed, a.Controller.Cancel)
		},
	}
	pool.add(cmd)
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the final summary")
	return cmd
}

// watchRuns shows the runs until they end, cancelling them on the first
// Ctrl-C and leaving on the second. It returns an exitError unless every
// run succeeded.
func watchRuns(e *env, w *watcher, ids []apiv1.RunID, cancel func(context.Context, apiv1.RunID) error) error {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	go func() {
		<-sig
		fmt.Fprintln(e.stderr, "cancelling (press Ctrl-C again to leave now; the runs go on being cancelled)")
		for _, id := range ids {
			_ = cancel(ctx, id)
		}
		<-sig
		leave()
	}()
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

// runRemote submits the files' documents to the server and watches the run.
func runRemote(ctx context.Context, e *env, c *client.Client, files []string, params map[string]string, project string, quiet bool) error {
	var body []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return &apiv1.Error{Code: apiv1.CodeParse, File: f, Message: err.Error()}
		}
		body = append(append(body, b...), "\n---\n"...)
	}
	run, err := c.Submit(ctx, body, project, params)
	if err != nil {
		return err
	}
	return watchRuns(e, remoteWatcher(e, c, quiet), []apiv1.RunID{run.ID}, c.Cancel)
}
