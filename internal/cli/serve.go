package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/backend/local"
	"kiln.dev/kiln/internal/buildinfo"
	"kiln.dev/kiln/internal/server"
)

// The embedded engine is what the server serves.
var (
	_ server.Engine       = (*app.App)(nil)
	_ server.SecretKeeper = (*app.App)(nil)
	_ server.CacheKeeper  = (*app.App)(nil)
	_ server.PartyKeeper  = (*app.App)(nil)
)

func newServeCmd(e *env) *cobra.Command {
	var pool poolFlags
	var tasks taskFlags
	var addr string
	var life lifeFlags
	var party partyFlags
	var sf serveFlags
	var tf tlsFlags
	limits := newLimitFlags()
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the engine for everyone behind the HTTP API",
		Long: "Run the engine and serve the API under /api/v1 (see /api/v1/openapi.json). The first start\n" +
			"writes an admin token to KILN_HOME/admin.token (mode 0600). SIGTERM stops gracefully: running\n" +
			"tasks keep running and the next start adopts them.",
		Args: none("kiln serve takes no arguments; set the address with --addr"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			lim, err := limits.resolve()
			if err != nil {
				return err
			}
			var metricsPublic bool
			if pool.jsonLog, metricsPublic, err = sf.resolve(cmd, e); err != nil {
				return err
			}
			pool.serving = true
			tlsCfg, pin, err := tf.config()
			if err != nil {
				return err
			}
			var isolation string
			a, err := e.openApp(cmd.Context(), collecting, &pool, func(cfg *app.Config) (err error) {
				cfg.Schedules, cfg.Serving = true, true
				if err := life.apply(cfg); err != nil {
					return err
				}
				if err := party.apply(e, cfg); err != nil {
					return err
				}
				cfg.TLSCert = absPath(tf.cert)
				isolation, err = tasks.apply(cfg)
				return err
			})
			if err != nil {
				return err
			}
			defer a.Close()
			fmt.Fprintln(e.stdout, isolation)
			if h, why := chosenHome(); why != "" && h == e.home && !cmd.Flag("home").Changed {
				fmt.Fprintf(e.stdout, "home: %s (%s)\n", h, why)
			}
			local.HideProcess()
			if err := ensureAdminToken(cmd.Context(), e, a); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usagef("listening on %s: %v", addr, err)
			}
			advertiseDefault(e, a, ln, scheme(tlsCfg))
			if !a.Replicated {
				a.Start()
			}
			fmt.Fprintf(e.stdout, "kiln serving on %s://%s\n", scheme(tlsCfg), ln.Addr())
			e.sayPin(pin)
			a.Controller.Logger().Info("serving", "address", scheme(tlsCfg)+"://"+ln.Addr().String(), "store", storeKind(a),
				"version", buildinfo.Read().Version, "build", buildinfo.Line(buildinfo.Read()))
			return serve(e, a, ln, lim, metricsPublic, tlsCfg)
		},
	}
	pool.add(cmd)
	tasks.add(cmd)
	limits.add(cmd)
	life.add(cmd)
	party.add(cmd)
	sf.add(cmd)
	tf.add(cmd)
	def := os.Getenv("KILN_ADDR")
	if def == "" {
		def = "127.0.0.1:8420"
	}
	cmd.Flags().StringVar(&addr, "addr", def, "address to listen on, HOST:PORT (env KILN_ADDR)")
	return cmd
}

// serve answers requests until SIGTERM or SIGINT, adopting runs whose
// engine is gone as it goes, then shuts down gracefully.
func serve(e *env, a *app.App, ln net.Listener, limits server.Limits, metricsPublic bool, tlsCfg *tls.Config) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	cfg := server.Config{
		Store: a.Store, Engine: a, Secrets: a, Templates: a, Schedules: a, Runtimes: a, Cache: a, Artifacts: a, Parties: a, Party: a.Party, PartyHost: partyHost(a), Channel: channelHost(a),
		Metrics: a.Metrics.Handler(), MetricsPublic: metricsPublic, Requests: a.Metrics, Limits: limits, Log: a.Controller.Logger(),
	}
	errc := make(chan error, 2)
	if a.Replicated {
		cfg.Leadership = a.Leadership
		go func() {
			if err := lead(ctx, e, a, replicaAddress(a, ln)); err != nil {
				a.Controller.Logger().Error("stopped leading", "err", err)
				errc <- err
			}
		}()
	} else {
		go adopt(ctx, e, a)
	}
	api := server.New(cfg)
	srv := api.HTTPServer()
	srv.TLSConfig = tlsCfg
	go func() {
		if tlsCfg != nil {
			errc <- srv.ServeTLS(api.TLSListener(ln), "", "")
			return
		}
		errc <- srv.Serve(api.Listener(ln))
	}()
	var stopped error
	select {
	case stopped = <-errc:
		if errors.Is(stopped, http.ErrServerClosed) {
			return stopped
		}
	case <-ctx.Done():
		a.Controller.Logger().Info("stopping: asked to (SIGTERM or SIGINT)")
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdown)
	if a.Replicated {
		fmt.Fprintln(e.stdout, "kiln stopped; running tasks keep running, and the replica that leads next adopts them")
	} else {
		fmt.Fprintln(e.stdout, "kiln stopped; running tasks keep running and are adopted on the next start")
	}
	if stopped != nil {
		return stopped
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// storeKind names the kind of a's store for the log, never its URL
// (which may hold a password).
func storeKind(a *app.App) string {
	if a.Replicated {
		return "postgres"
	}
	return "sqlite"
}

// lead runs a as one replica of its store until ctx ends or it stops
// leading, saying when it leads.
func lead(ctx context.Context, e *env, a *app.App, address string) error {
	fmt.Fprintln(e.stdout, "the store is shared by replicas: this server follows until it leads (GET /readyz says who leads)")
	return a.Lead(ctx, address, func(msg string) { fmt.Fprintln(e.stdout, msg) })
}

// replicaAddress is where other replicas, and users, reach this one.
func replicaAddress(a *app.App, ln net.Listener) string {
	if a.Advertise != "" {
		return a.Advertise
	}
	return "http://" + ln.Addr().String()
}

// adopt takes over, now and every 10 seconds, unfinished runs whose engine is gone.
func adopt(ctx context.Context, e *env, a *app.App) {
	for {
		if ids, err := adoptOnce(ctx, a); err != nil && ctx.Err() == nil {
			a.Controller.Logger().Error("adopting runs", "err", err)
		} else if len(ids) > 0 {
			fmt.Fprintf(e.stdout, "adopted %s whose engine was gone\n", plural(len(ids), "run"))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Second):
		}
	}
}

// adoptOnce claims the unfinished runs no live engine works on and
// returns those it took over from an engine that is gone: a claim also
// renews the runs this engine already owns, and those are not adopted.
func adoptOnce(ctx context.Context, a *app.App) ([]apiv1.RunID, error) {
	return a.Adopt(ctx)
}

// ensureAdminToken creates the first admin token when there is none and
// writes it, readable by its owner only, to KILN_HOME/admin.token.
func ensureAdminToken(ctx context.Context, e *env, a *app.App) error {
	tokens, err := a.Store.ListTokens(ctx)
	if err != nil || len(tokens) > 0 {
		return err
	}
	raw, _, err := server.CreateToken(ctx, a.Store, "admin", "admin", []string{"*"})
	if err != nil {
		return err
	}
	path := filepath.Join(a.Home, "admin.token")
	if err := os.WriteFile(path, []byte(raw+"\n"), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "created an admin token in %s (mode 0600)\n", path)
	return nil
}
