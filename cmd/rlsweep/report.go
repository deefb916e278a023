package main

import (
	"bytes"
	"errors"
	"fmt"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/sweepstore"
)

// ReportOptions are report's inputs.
type ReportOptions struct {
	Sweep  string
	Output string // the file to write; "" means <name>-<short-id>-report.html in the working directory
	Open   bool
}

func newReportCmd(f *Factory, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{}
	cmd := &cobra.Command{
		Use:   "report SWEEP",
		Short: "Draw a sweep's report.html from the artifact store, write it locally and optionally open it",
		Long: "Draw the sweep's report (leaderboard, learning curves, parallel coordinates, sensitivity, " +
			"divergences, probes, compute saved) from the artifact store — from the results recorded so far " +
			"while the sweep runs — and write it as one self-contained HTML file.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Sweep = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runReport(cmd, f, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "file to write (default <name>-<id>-report.html)")
	cmd.Flags().BoolVar(&opts.Open, "open", false, "open the report in a browser (xdg-open); without one, print the URL to open")
	return cmd
}

func runReport(cmd *cobra.Command, f *Factory, opts *ReportOptions) error {
	sweepID, _, err := parseSweepRef(f, opts.Sweep)
	if err != nil {
		return err
	}
	store, err := f.Store()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	res, err := loadResults(cmd, f, store, sweepID)
	if err != nil {
		return err
	}
	spec, err := loadSpec(cmd, store, sweepID)
	if err != nil {
		return err
	}
	if spec != nil && res.Metric.Name == "" {
		// A running sweep's results come from the parts, which do not know the spec.
		res.Name, res.Metric, res.Params = spec.Name, spec.Metric, sweeps.ParamNames(spec)
	}
	ss := sweepstore.New(store)
	reg, err := ss.ReadRegression(ctx, sweepID)
	if errors.Is(err, artifacts.ErrNotFound) {
		reg, err = nil, nil // a sweep that ran as no regression
	}
	if err != nil {
		return err
	}
	html, err := ss.RenderReport(ctx, res, spec, reg, time.Now())
	if err != nil {
		return fmt.Errorf("report of %s: %w", sweepID, err)
	}
	path := opts.Output
	if path == "" {
		path = strings.ReplaceAll(strings.TrimPrefix(sweepID, "sweep/"), "/", "-") + "-report.html"
	}
	if err := os.WriteFile(path, html, 0o644); err != nil {
		return fmt.Errorf("--output: %w", err)
	}
	abs, _ := filepath.Abs(path) // only for the message; path itself was written
	fmt.Fprintf(f.Out, "report: %s\n", abs)
	if opts.Open {
		return openFile(f, abs)
	}
	return nil
}

// loadSpec reads the spec.json the Plan activity stored; nil when the sweep has none.
func loadSpec(cmd *cobra.Command, store artifacts.Store, sweepID string) (*sweeps.Spec, error) {
	spec, err := sweepstore.New(store).ReadSpec(cmd.Context(), sweepID)
	if errors.Is(err, artifacts.ErrNotFound) {
		return nil, nil
	}
	return spec, err
}

// openWait is how long openFile waits for the opener to fail: xdg-open exits at once when it finds no
// browser, and may run as long as the browser when it starts one.
var openWait = 5 * time.Second

// openFile opens path in a browser with xdg-open (open on macOS). When there is none, or it fails, it
// says so and prints the file:// URL to open by hand; the report itself was written, so that is no error.
func openFile(f *Factory, path string) error {
	opener := "xdg-open"
	if runtime.GOOS == "darwin" {
		opener = "open"
	}
	url := (&neturl.URL{Scheme: "file", Path: path}).String()
	failed := func(why string) error {
		fmt.Fprintf(f.ErrOut, "--open: could not open a browser (%s); open %s\n", why, url)
		return nil
	}
	bin, err := exec.LookPath(opener)
	if err != nil {
		return failed(opener + " not found")
	}
	var out bytes.Buffer
	c := exec.Command(bin, url)
	c.Stdout, c.Stderr = &out, &out
	c.WaitDelay = time.Second // a browser it started may hold the output open
	if err := c.Start(); err != nil {
		return failed(fmt.Sprintf("%s: %v", bin, err))
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
			why := fmt.Sprintf("%s: %v", opener, err)
			if msg := strings.TrimSpace(out.String()); msg != "" {
				why += ": " + firstLineOf(msg)
			}
			return failed(why)
		}
	case <-time.After(openWait):
		// Still running: it started a browser that has not returned.
	}
	return nil
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
