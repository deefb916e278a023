package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlsweep/rlsweep/devserver"
	"github.com/rlsweep/rlsweep/runner"
	"github.com/rlsweep/rlsweep/worker"
	"github.com/rlsweep/rlsweep/workflows"
)

// DevOptions are dev's inputs.
type DevOptions struct {
	File     string // a spec to submit and watch; "" just serves
	StateDir string
	Port     int
	UIPort   int
	Slots    int
	GPUs     string // --gpus, as for worker: one slot per GPU
	Exit     bool   // exit once the submitted sweep has ended
	// StopTimeout: at Ctrl-C, how long the worker waits for running trainers to stop (--stop-timeout).
	StopTimeout time.Duration
	// TrainerPIDNamespace: each trainer in a PID namespace of its own where one can be created.
	TrainerPIDNamespace bool
	// AllowTrainers: the only programs the in-process worker runs as trainers (--allow-trainer).
	AllowTrainers []string
	Log           LogOptions
}

func newDevCmd(f *Factory, runF func(*DevOptions) error) *cobra.Command {
	opts := &DevOptions{}
	cmd := &cobra.Command{
		Use:   "dev [FILE]",
		Short: "Run everything on this machine: a Temporal dev server, the Web UI, a worker, a local artifact store",
		Long: "Start the pinned Temporal dev server (state in a SQLite file under --state-dir, Web UI on --ui-port,\n" +
			"rlsweep's search attributes registered) and an in-process worker. With FILE, submit that sweep, follow\n" +
			"it, print its best configurations once it has ended, and go on serving (the Web UI included) until\n" +
			"Ctrl-C; --exit ends instead, saying how to serve the state again. If a server already answers on\n" +
			"--port, it is reused. Ctrl-C stops what dev started. Everything listens on 127.0.0.1; the server's HTTP API\n" +
			"refuses every request and the Web UI refuses other sites' pages (foreign Host or Origin headers), but any\n" +
			"local user can reach the gRPC frontend and so run commands as you: docs/security.md.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.File = args[0]
			}
			if opts.Slots < 1 {
				return invalidInput(fmt.Errorf("--slots: got %d, want at least 1", opts.Slots))
			}
			if err := checkSlotsWithGPUs(cmd, opts.Slots, opts.GPUs); err != nil {
				return invalidInput(err)
			}
			if _, err := parseGPUs(opts.GPUs); err != nil {
				return invalidInput(err)
			}
			if opts.Port < 1 || opts.Port > 65535 {
				return invalidInput(fmt.Errorf("--port: got %d, want 1 to 65535", opts.Port))
			}
			if err := checkStopTimeout(opts.StopTimeout); err != nil {
				return invalidInput(err)
			}
			if err := opts.Log.validate(); err != nil {
				return invalidInput(err)
			}
			if _, err := allowTrainers(opts.AllowTrainers); err != nil {
				return invalidInput(err)
			}
			if opts.UIPort < 1 || opts.UIPort > 65535 || opts.UIPort == opts.Port {
				return invalidInput(fmt.Errorf("--ui-port: got %d, want 1 to 65535, other than --port %d", opts.UIPort, opts.Port))
			}
			if runF != nil {
				return runF(opts)
			}
			return runDev(cmd, f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.StateDir, "state-dir", filepath.Join(Home(), "dev"), "where the dev server keeps its SQLite file and log")
	fl.IntVar(&opts.Port, "port", 7233, "Temporal frontend port")
	fl.IntVar(&opts.UIPort, "ui-port", 8233, "Temporal Web UI port")
	fl.IntVar(&opts.Slots, "slots", 2, "trials run at once by the in-process worker on the CPU, without --gpus")
	addGPUsFlag(cmd, &opts.GPUs)
	fl.BoolVar(&opts.Exit, "exit", false, "with FILE: exit once the sweep has ended, stopping the server (make demo passes it when stdin is not a terminal)")
	fl.DurationVar(&opts.StopTimeout, "stop-timeout", defaultStopTimeout, stopTimeoutUsage)
	addTrainerPIDNamespaceFlag(cmd, &opts.TrainerPIDNamespace)
	addAllowTrainerFlag(cmd, &opts.AllowTrainers)
	addLogFlags(cmd, &opts.Log)
	return cmd
}

// workerOptions are those of dev's in-process worker: both queues, --slots on the CPU or one slot
// per GPU of --gpus.
func (o *DevOptions) workerOptions() *WorkerOptions {
	return &WorkerOptions{Control: true, Queues: []string{workflows.DefaultTrialQueue}, Slots: o.Slots, GPUs: o.GPUs, TrialsPerGPU: 1,
		TrainerPIDNamespace: o.TrainerPIDNamespace,
		AllowTrainers:       o.AllowTrainers}
}

func runDev(cmd *cobra.Command, f *Factory, opts *DevOptions) error {
	ctx := cmd.Context()
	if f.ProtectCredentials {
		if err := hideCredentials(nil); err != nil {
			return err
		}
	}
	if err := checkGPUsPresent(ctx, opts.GPUs, nvidiaSMI, f.ErrOut); err != nil {
		return invalidInput(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.Port))
	if f.Address == "" {
		// The server dev runs: dialled plainly, whatever Temporal Cloud settings the shell carries
		// (TEMPORAL_API_KEY, TLS, TEMPORAL_NAMESPACE), in the namespace it was started with.
		f.Address, f.Local = addr, true
		if f.Namespace == "" {
			f.Namespace = "default"
		}
	}
	if f.UIURL == "" {
		f.UIURL = fmt.Sprintf("http://localhost:%d", opts.UIPort)
	}
	started := false // whether dev runs the server, which stops with it
	if devserver.Running(addr) {
		fmt.Fprintf(f.ErrOut, "dev: using the Temporal server already running on %s\n", addr)
	} else {
		started = true
		if err := os.MkdirAll(opts.StateDir, 0o755); err != nil {
			return err
		}
		logFile, err := os.OpenFile(filepath.Join(opts.StateDir, "temporal.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer logFile.Close()
		fmt.Fprintf(f.ErrOut, "dev: starting Temporal dev server on %s (state %s)\n", addr, opts.StateDir)
		srv, err := devserver.Start(ctx, devserver.Options{DBFile: filepath.Join(opts.StateDir, "temporal.db"),
			Port: opts.Port, UIPort: opts.UIPort, Namespace: f.Namespace, SearchAttributes: workflows.SearchAttributes(), Log: logFile,
			Env: runner.WithoutSecrets(os.Environ())}) // the server needs no credential, and any process of the user reads its environment
		if err != nil {
			return err
		}
		defer srv.Stop()
	}
	f.Logger = opts.Log.logger(f.ErrOut)
	c, err := f.Client(ctx)
	if err != nil {
		return err
	}
	// The dev server registers search attributes only when it creates its database: a state directory
	// from an older rlsweep, or a server someone else started, may lack the ones added since.
	added, err := devserver.EnsureSearchAttributes(ctx, c, f.namespace(), workflows.RequiredSearchAttributes())
	if err != nil {
		return fmt.Errorf("register search attributes: %w", err)
	}
	// Sweeps run without the optional ones (a namespace may have no KeywordList slot left).
	opt, err := devserver.EnsureSearchAttributes(ctx, c, f.namespace(), workflows.OptionalSearchAttributes())
	if err != nil {
		fmt.Fprintf(f.ErrOut, "dev: optional search attributes not registered (trials go without them): %v\n", err)
	}
	if added = append(added, opt...); len(added) > 0 {
		fmt.Fprintf(f.ErrOut, "dev: registered search attributes %s\n", strings.Join(added, ", "))
	}
	wopts := opts.workerOptions()
	acts, err := newActivities(f, wopts)
	if err != nil {
		return err
	}
	w, err := worker.New(c, worker.Options{Control: true, TrialQueues: wopts.Queues, Slots: opts.Slots, Activities: acts,
		StopTimeout: opts.StopTimeout})
	if err != nil {
		return err
	}
	reclaimScratch(f, acts, "dev")
	setIsolation(f, "dev", wopts.TrainerPIDNamespace)
	if err := protectMemory(f, "dev"); err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return err
	}
	defer func() {
		if ctx.Err() != nil {
			fmt.Fprintln(f.ErrOut, "dev: "+stoppingMessage(opts.StopTimeout))
		}
		w.Stop()
		waitUploads(f, acts, opts.StopTimeout, "dev")
	}()
	slots, gpus := opts.Slots, "on the CPU"
	if acts.Slots != nil {
		slots, gpus = acts.Slots.Len(), "on GPUs "+opts.GPUs
	}
	fmt.Fprintf(f.ErrOut, "dev: worker serving %s and %s with %d slots %s; artifacts in %s\n",
		workflows.ControlQueue, workflows.DefaultTrialQueue, slots, gpus, acts.Store.URL(""))
	fmt.Fprintf(f.ErrOut, "dev: Web UI %s\n", f.UIURL)
	if opts.File != "" {
		sub := &SubmitOptions{File: opts.File, Watch: true, inDev: true}
		err := runSubmit(cmd, f, sub)
		if ctx.Err() != nil {
			return nil // Ctrl-C: the deferred stops say what happens
		}
		if opts.Exit || err != nil {
			if started {
				fmt.Fprintf(f.ErrOut, "dev: the sweep has ended; the server stops now and its Web UI with it. `%s` serves this state again at %s\n",
					devRestart(opts), f.UIURL)
			}
			return err
		}
	}
	fmt.Fprintf(f.ErrOut, "dev: Web UI at %s; Ctrl-C stops the worker and the server\n", f.UIURL)
	<-ctx.Done()
	return nil
}

// demoTop is how many configurations `submit --watch` (and dev) print once the sweep has ended.
const demoTop = 5

// printTopConfigs prints the ended sweep's best configurations and the commands that show the rest.
func printTopConfigs(cmd *cobra.Command, f *Factory, sweepID string) {
	store, err := f.Store()
	if err != nil {
		fmt.Fprintf(f.ErrOut, "leaderboard: %v\n", err)
		return
	}
	res, err := loadResults(cmd, f, store, sweepID)
	if err != nil {
		fmt.Fprintf(f.ErrOut, "leaderboard: %v\n", err)
		return
	}
	if len(res.Objectives) > 1 {
		fmt.Fprintf(f.Out, "\nconfigurations of %s by Pareto front of its %d objectives:\n", sweepID, len(res.Objectives))
		if err := writePareto(f.Out, res); err != nil {
			fmt.Fprintf(f.ErrOut, "pareto: %v\n", err)
			return
		}
		fmt.Fprintf(f.Out, "every trial: %s\nthe report: %s\n", f.commandLine("results", sweepID), f.commandLine("report", sweepID, "--open"))
		return
	}
	fmt.Fprintf(f.Out, "\nbest configurations of %s (%s %s):\n", sweepID, res.Metric.Goal, res.Metric.Name)
	if err := writeLeaderboard(f.Out, res, demoTop); err != nil {
		fmt.Fprintf(f.ErrOut, "leaderboard: %v\n", err)
		return
	}
	fmt.Fprintf(f.Out, "every trial: %s\nthe report: %s\n", f.commandLine("results", sweepID), f.commandLine("report", sweepID, "--open"))
}

// devRestart is the command line that runs this dev server again on the same state and ports.
func devRestart(opts *DevOptions) string {
	line := []string{selfName(), "dev"}
	if opts.StateDir != filepath.Join(Home(), "dev") {
		line = append(line, "--state-dir", opts.StateDir)
	}
	if opts.Port != 7233 {
		line = append(line, "--port", strconv.Itoa(opts.Port))
	}
	if opts.UIPort != 8233 {
		line = append(line, "--ui-port", strconv.Itoa(opts.UIPort))
	}
	return strings.Join(line, " ")
}
