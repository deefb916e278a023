package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.temporal.io/sdk/log"

	"github.com/rlsweep/rlsweep/artifacts"
)

// Factory holds what every command needs from the outside world, so tests can swap it: the streams,
// and the Temporal client and artifact store, made on first use from the global flags.
type Factory struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	Address   string // --address, else TEMPORAL_ADDRESS / the env config profile, else localhost:7233
	Namespace string // --namespace, likewise
	StoreURL  string // --store, else RLSWEEP_STORE, else ~/.rlsweep/artifacts
	UIURL     string // --ui-url, else RLSWEEP_UI_URL, else http://localhost:8233
	// Compression is --grpc-compression: auto (gzip except to a loopback address), gzip or none.
	Compression string
	// Local dials Address as a local dev server: plain TCP, no API key, the environment's Temporal
	// settings (TEMPORAL_API_KEY, TLS, profiles) left out. rlsweep dev sets it for the server it runs.
	Local bool
	// ProtectCredentials keeps worker's and dev's credentials out of their trainers' reach
	// (hideCredentials: a re-exec without them in the environment block; protectMemory: no ptrace
	// access); the
	// rlsweep binary sets it, tests running commands in process leave it off.
	ProtectCredentials bool
	// Logger is what the Temporal client logs to; nil drops everything (every command but worker and
	// dev, whose --log-level and --log-format set it).
	Logger log.Logger

	client client.Client
}

func newFactory() *Factory {
	return &Factory{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, ProtectCredentials: true}
}

// Home is rlsweep's state directory: $RLSWEEP_HOME, else ~/.rlsweep.
func Home() string {
	if h := os.Getenv("RLSWEEP_HOME"); h != "" {
		return h
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".rlsweep"
	}
	return filepath.Join(home, ".rlsweep")
}

// Client dials Temporal with the standard env config (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
// TEMPORAL_API_KEY, TLS settings, profiles), overridden by the flags.
func (f *Factory) Client(ctx context.Context) (client.Client, error) {
	if f.client != nil {
		return f.client, nil
	}
	var opts client.Options
	if !f.Local {
		var err error
		if opts, err = envconfig.LoadDefaultClientOptions(); err != nil {
			return nil, fmt.Errorf("temporal connection settings: %w", err)
		}
	}
	source := "TEMPORAL_ADDRESS"
	if os.Getenv(source) == "" {
		source = "the Temporal env config profile's address"
	}
	if f.Address != "" {
		opts.HostPort, source = f.Address, "--address"
	}
	if err := checkAddress(source, opts.HostPort); err != nil {
		return nil, err
	}
	if f.Namespace != "" {
		opts.Namespace = f.Namespace
	}
	compression, err := grpcCompression(f.Compression, opts.HostPort)
	if err != nil {
		return nil, err
	}
	opts.ConnectionOptions.GrpcCompression = compression
	opts.Logger = quietLogger{}
	if f.Logger != nil {
		opts.Logger = f.Logger
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		addr := opts.HostPort
		if addr == "" {
			addr = client.DefaultHostPort
		}
		if speaksHTTP1(err) {
			return nil, invalidInput(webUIAddress(source, addr))
		}
		return nil, fmt.Errorf("connect to Temporal at %s: %w (is a server running? try `rlsweep dev`)", addr, err)
	}
	f.client = c
	return c, nil
}

// Store opens the artifact store.
func (f *Factory) Store() (artifacts.Store, error) {
	u := f.StoreURL
	if u == "" {
		u = os.Getenv("RLSWEEP_STORE")
	}
	if u == "" {
		u = filepath.Join(Home(), "artifacts")
	}
	if f.Logger != nil {
		// A worker's store logs its retried S3 requests where the worker logs the rest.
		return artifacts.Open(u, artifacts.WithLogger(f.Logger))
	}
	return artifacts.Open(u)
}

// WorkflowURL is the Web UI page of a workflow.
func (f *Factory) WorkflowURL(workflowID string) string {
	base := f.UIURL
	if base == "" {
		base = os.Getenv("RLSWEEP_UI_URL")
	}
	if base == "" {
		base = "http://localhost:8233"
	}
	return base + "/namespaces/" + url.PathEscape(f.namespace()) + "/workflows/" + url.PathEscape(workflowID)
}

// namespace is the Temporal namespace commands use: --namespace, else TEMPORAL_NAMESPACE, else default.
func (f *Factory) namespace() string {
	if f.Namespace != "" {
		return f.Namespace
	}
	if ns := os.Getenv("TEMPORAL_NAMESPACE"); ns != "" {
		return ns
	}
	return "default"
}

// commandLine is an rlsweep command line for the user to run next: with the --address, --namespace
// and --store this one was given, so it reaches the same server and store.
func (f *Factory) commandLine(args ...string) string {
	line := []string{selfName()}
	if f.Address != "" && !f.Local {
		line = append(line, "--address", f.Address)
	}
	if f.Namespace != "" && !f.Local {
		line = append(line, "--namespace", f.Namespace)
	}
	if f.StoreURL != "" {
		line = append(line, "--store", artifacts.RedactURL(f.StoreURL))
	}
	line = append(line, args...)
	for i, a := range line {
		if a == "" || strings.ContainsFunc(a, func(r rune) bool { return !strings.ContainsRune(shellSafe, r) }) {
			line[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(line, " ")
}

// selfName is how to run rlsweep again: bin/rlsweep when it was run so (as make demo and the README
// do), else rlsweep.
func selfName() string {
	if a := os.Args[0]; filepath.Base(a) == "rlsweep" && !filepath.IsAbs(a) && strings.ContainsRune(a, filepath.Separator) {
		return a
	}
	return "rlsweep"
}

// shellSafe are the characters a shell word needs no quotes for.
const shellSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,"

func (f *Factory) close() {
	if f.client != nil {
		f.client.Close()
		f.client = nil
	}
}

func newRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "rlsweep",
		Short:         "Hyperparameter sweeps of PPO training on Temporal, with probe checks and RL diagnostics",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPostRun: func(*cobra.Command, []string) {
			f.close()
		},
	}
	root.SetOut(f.Out)
	root.SetErr(f.ErrOut)
	root.SetFlagErrorFunc(flagError)
	// A word after rlsweep that names no command is invalid input (exit 2), like a bad flag; cobra's own
	// "unknown command" error would exit 1.
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return invalidInput(fmt.Errorf("command: got %q, want one of %s (see rlsweep --help)", args[0], commandNames(cmd)))
	}
	pf := root.PersistentFlags()
	pf.StringVar(&f.Address, "address", "", "Temporal frontend host:port (default: TEMPORAL_ADDRESS, else localhost:7233)")
	pf.StringVar(&f.Namespace, "namespace", "", "Temporal namespace (default: TEMPORAL_NAMESPACE, else default)")
	pf.StringVar(&f.StoreURL, "store", "", "artifact store: a directory or s3://bucket/prefix (default: RLSWEEP_STORE, else ~/.rlsweep/artifacts)")
	pf.StringVar(&f.UIURL, "ui-url", "", "Temporal Web UI base URL (default: RLSWEEP_UI_URL, else http://localhost:8233)")
	pf.StringVar(&f.Compression, "grpc-compression", "auto", "compression of the requests to Temporal: auto (gzip, except to a loopback address), gzip or none")
	root.AddCommand(
		newValidateCmd(f, nil),
		newSubmitCmd(f, nil),
		newStatusCmd(f, nil),
		newListCmd(f, nil),
		newWatchCmd(f, nil),
		newResultsCmd(f, nil),
		newLogsCmd(f, nil),
		newReportCmd(f, nil),
		newCancelCmd(f, nil),
		newPauseCmd(f), newResumeCmd(f), newConcurrencyCmd(f),
		newWorkerCmd(f, nil),
		newDevCmd(f, nil),
		newTrainCmd(f),
		newDiagnoseCmd(f),
		newProbeCmd(f),
		newScheduleCmd(f, nil, nil),
		newBaselineCmd(f, nil),
	)
	for _, c := range root.Commands() {
		argsAreInput(c)
	}
	return root
}

// argsAreInput makes a wrong number of arguments invalid input (exit 2) with the command's usage line;
// cobra's argument checks return plain errors, which would exit 1.
func argsAreInput(c *cobra.Command) {
	check := c.Args
	if check == nil {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return invalidInput(fmt.Errorf("%s: %w; usage: %s", cmd.Name(), err, cmd.UseLine()))
		}
		return nil
	}
}

// flagError rewrites pflag's errors as `--flag: got VALUE, want ALLOWED` and marks them invalid input.
func flagError(cmd *cobra.Command, err error) error {
	var bad *pflag.InvalidValueError
	var unknown *pflag.NotExistError
	switch {
	case errors.As(err, &bad):
		fl := bad.GetFlag()
		return invalidInput(fmt.Errorf("--%s: got %q, want %s", fl.Name, bad.GetValue(), flagWant(fl.Value.Type())))
	case errors.As(err, &unknown):
		var names []string
		cmd.Flags().VisitAll(func(fl *pflag.Flag) {
			if !fl.Hidden {
				names = append(names, "--"+fl.Name)
			}
		})
		return invalidInput(fmt.Errorf("%w; %s takes %s", err, cmd.CommandPath(), strings.Join(names, ", ")))
	}
	return invalidInput(err)
}

// flagWant says what a flag of a pflag value type accepts.
func flagWant(typ string) string {
	switch typ {
	case "bool":
		return "true or false"
	case "int", "int64", "int32":
		return "an integer"
	case "float64":
		return "a number"
	case "duration":
		return "a duration such as 500ms, 2s or 1m"
	case "stringSlice":
		return "comma-separated names"
	}
	return "a " + typ
}

func commandNames(root *cobra.Command) string {
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return strings.Join(names, ", ")
}

type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
