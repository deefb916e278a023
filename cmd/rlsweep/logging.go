package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/log"

	"github.com/rlsweep/rlsweep/worker"
)

// LogOptions are the worker's logging flags (worker and dev): what the Temporal SDK and the
// activities log, on stderr.
type LogOptions struct {
	Level  string // --log-level: debug, info, warn or error
	Format string // --log-format: text or json
}

var (
	logLevels  = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}
	logFormats = []string{"text", "json"}
)

func addLogFlags(cmd *cobra.Command, o *LogOptions) {
	cmd.Flags().StringVar(&o.Level, "log-level", "warn", "the worker's log level on stderr: debug, info, warn or error")
	cmd.Flags().StringVar(&o.Format, "log-format", "text", "the worker's log format on stderr: text (key=value) or json (one object a line)")
}

func (o LogOptions) validate() error {
	if _, ok := logLevels[o.Level]; !ok {
		return fmt.Errorf("--log-level: got %q, want debug, info, warn or error", o.Level)
	}
	if !contains(logFormats, o.Format) {
		return fmt.Errorf("--log-format: got %q, want text or json", o.Format)
	}
	return nil
}

// logger is the structured logger the worker's Temporal client and activities write to w with: one
// line per failure, expected cancellations below Warn (worker.Logger).
func (o LogOptions) logger(w io.Writer) log.Logger {
	opts := &slog.HandlerOptions{Level: logLevels[o.Level]}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if o.Format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return worker.Logger(log.NewStructuredLogger(slog.New(h)))
}
