package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// serveFile is the serve section of the configuration file: settings of
// kiln serve that its flags override.
type serveFile struct {
	// LogFormat is how the server logs: text (the default) or json.
	LogFormat string `json:"logFormat,omitempty"`
	// MetricsPublic serves /metrics without a token.
	MetricsPublic *bool `json:"metricsPublic,omitempty"`
}

// serveFlags set how kiln serve logs and who may read its metrics.
type serveFlags struct {
	logFormat     string
	metricsPublic bool
}

func (f *serveFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.logFormat, "log-format", "", "how the server logs to stderr: text or json (slog's JSON: time, level, msg and attributes) (default: the configuration file's serve.logFormat, else text)")
	cmd.Flags().BoolVar(&f.metricsPublic, "metrics-public", false, "serve /metrics without a token, for a Prometheus that has none (default: the configuration file's serve.metricsPublic, else false)")
}

// resolve returns the flags over the configuration file: whether the
// server logs JSON, and serves its metrics to anyone.
func (f *serveFlags) resolve(cmd *cobra.Command, e *env) (jsonLog, metricsPublic bool, err error) {
	file, path, err := e.backend.load(e.home)
	if err != nil {
		return false, false, err
	}
	format := file.Serve.LogFormat
	if cmd.Flags().Changed("log-format") {
		format, path = f.logFormat, ""
	}
	switch format {
	case "", "text":
	case "json":
		jsonLog = true
	default:
		if path == "" {
			return false, false, usagef("--log-format %q is neither text nor json", format)
		}
		return false, false, &apiv1.Error{
			Code: apiv1.CodeInvalidValue, File: path, Field: "serve.logFormat",
			Message: fmt.Sprintf("%q is neither text nor json", format), Hint: "set logFormat: text or logFormat: json",
		}
	}
	metricsPublic = file.Serve.MetricsPublic != nil && *file.Serve.MetricsPublic
	if cmd.Flags().Changed("metrics-public") {
		metricsPublic = f.metricsPublic
	}
	return jsonLog, metricsPublic, nil
}
