package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/metrics"
)

// corpusRun is one row of a corpus manifest (diagnostics/corpus/README.md describes the columns).
type corpusRun struct {
	id, framework, format, path, label string
}

// corpusOutcome is what diagnose made of one run.
type corpusOutcome struct {
	run      corpusRun
	stopped  bool
	rule     string
	at       float64 // the stop's step as a fraction of the run's last step
	ended    string  // the end-of-run rule that judged the run bad once it was over (not stopped); "" if none
	records  int
	err      string // the run could not be read (or diagnose panicked: crash)
	crash    bool
	lastStep int64
	absent   bool // the run's file is not in this copy of the corpus: skipped, counted
}

// TestDiagnosticsCorpus replays every run of the corpus (a directory holding manifest.tsv and the runs
// it names) through `rlsweep diagnose`'s reader and engine, as a sweep would have seen it, and prints a
// table: which runs labelled bad were stopped and when, which runs labelled healthy were stopped (there
// must be none), and crashes (none). The corpus is $RLSWEEP_CORPUS, else the corpus folder CI keeps beside
// the repository's clone; runs whose files are
// absent from that copy are skipped and counted. `make diagnostics-corpus` runs it verbosely.
func TestDiagnosticsCorpus(t *testing.T) {
	dir, err := corpusDir()
	if err != nil {
		t.Fatal(err)
	}
	if dir == "" {
		t.Skip("no corpus: RLSWEEP_CORPUS is not set and ../shared/corpus/diagnostics (beside the clone) has no manifest.tsv; the corpus of real logs lives outside the repository (diagnostics/corpus/README.md)")
	}
	runs, err := readCorpusManifest(filepath.Join(dir, "manifest.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var outs []corpusOutcome
	for _, r := range runs {
		if _, err := os.Stat(filepath.Join(dir, r.path)); err != nil && errors.Is(err, fs.ErrNotExist) {
			outs = append(outs, corpusOutcome{run: r, absent: true})
			continue
		}
		outs = append(outs, diagnoseCorpusRun(dir, r))
	}
	t.Logf("corpus %s: %d runs in its manifest\n%s", dir, len(runs), corpusTable(outs))
	for _, o := range outs {
		switch {
		case o.crash:
			t.Errorf("%s: diagnose crashed: %s", o.run.id, o.err)
		case o.stopped && o.run.label == "healthy":
			t.Errorf("%s: a healthy run was stopped by %s at %.0f%% of its length", o.run.id, o.rule, 100*o.at)
		case o.ended != "" && o.run.label == "healthy":
			t.Errorf("%s: a healthy run was judged bad at its end by %s", o.run.id, o.ended)
		}
	}
}

// corpusDir returns the corpus directory to replay: $RLSWEEP_CORPUS (made absolute), else the shared
// corpus beside the repository's clone when it holds a manifest, else "" (none here).
func corpusDir() (string, error) {
	if d := os.Getenv("RLSWEEP_CORPUS"); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", fmt.Errorf("RLSWEEP_CORPUS=%q: %v", d, err)
		}
		if _, err := os.Stat(filepath.Join(abs, "manifest.tsv")); err != nil {
			return "", fmt.Errorf("RLSWEEP_CORPUS=%q: want the corpus directory, holding manifest.tsv and the runs it names (diagnostics/corpus/README.md): %v", d, err)
		}
		return abs, nil
	}
	// The test runs in cmd/rlsweep: the clone's root is ../.., and CI's corpus folder sits beside it.
	abs, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "corpus", "diagnostics"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(abs, "manifest.tsv")); err != nil {
		return "", nil
	}
	return abs, nil
}

func readCorpusManifest(path string) ([]corpusRun, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cols []string
	var runs []corpusRun
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if cols == nil {
			cols = fields
			continue
		}
		get := func(name string) string {
			if i := slices.Index(cols, name); i >= 0 && i < len(fields) {
				return fields[i]
			}
			return ""
		}
		runs = append(runs, corpusRun{id: get("id"), framework: get("framework"), format: get("format"),
			path: get("path"), label: get("label")})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s: no runs", path)
	}
	return runs, nil
}

// diagnoseCorpusRun runs diagnose's reader and judge on one run, with the default warm-up (10% of the
// run's last step) and patience, and turns a panic into a crash.
func diagnoseCorpusRun(dir string, r corpusRun) (o corpusOutcome) {
	o.run = r
	defer func() {
		if p := recover(); p != nil {
			o.crash, o.err = true, fmt.Sprint(p)
		}
	}()
	path := filepath.Join(dir, r.path)
	if r.format == "tensorboard" {
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			path = filepath.Dir(path)
		}
	}
	opts := &DiagnoseOptions{Path: path, WarmupSteps: -1, Patience: 5, Output: "text"}
	if slices.Contains(metrics.Presets(), r.framework) {
		opts.Preset = r.framework
	}
	d, err := readRun(opts)
	if err != nil {
		o.err = err.Error()
		return o
	}
	if err := judge(d, opts); err != nil {
		o.err = err.Error()
		return o
	}
	o.records, o.lastStep = d.Records, lastStep(d.records)
	if d.Stop != nil {
		o.stopped, o.rule = true, d.Stop.Rule
		o.at = float64(d.Stop.Step) / math.Max(1, float64(o.lastStep))
	}
	if d.End != nil {
		o.ended = d.End.Rule
	}
	return o
}

// corpusBad lists the labels of runs that should be stopped, in the order the summary prints them.
var corpusBad = []string{"diverged", "collapsed", "never-learned"}

// corpusTable formats the outcomes and the summary lines of docs/BENCHMARKS.md's corpus section.
func corpusTable(outs []corpusOutcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| run | framework | label | records | verdict |\n|---|---|---|---|---|\n")
	var bad, badStopped, badEnded, healthy, healthyStopped, healthyEnded, crashes, unread, absent int
	byLabel, stoppedBy, endedBy := map[string]int{}, map[string]int{}, map[string]int{}
	var fracs []float64
	for _, o := range outs {
		if o.absent {
			absent++
			continue
		}
		verdict := "no stop"
		switch {
		case o.crash:
			verdict, crashes = "CRASH: "+o.err, crashes+1
		case o.err != "":
			verdict, unread = "unread: "+o.err, unread+1
		case o.stopped:
			verdict = fmt.Sprintf("stop: %s at %.0f%%", o.rule, 100*o.at)
		case o.ended != "":
			verdict = "at end: " + o.ended
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s |\n", o.run.id, o.run.framework, o.run.label, o.records, verdict)
		if o.err != "" {
			continue
		}
		byLabel[o.run.label]++
		if o.stopped {
			stoppedBy[o.run.label]++
		}
		if o.ended != "" {
			endedBy[o.run.label]++
		}
		switch {
		case o.run.label == "healthy":
			healthy++
			if o.stopped {
				healthyStopped++
			}
			if o.ended != "" {
				healthyEnded++
			}
		case slices.Contains(corpusBad, o.run.label):
			bad++
			if o.stopped {
				badStopped++
				fracs = append(fracs, o.at)
			}
			if o.ended != "" {
				badEnded++
			}
		}
	}
	slices.Sort(fracs)
	median := math.NaN()
	if len(fracs) > 0 {
		median = fracs[len(fracs)/2]
	}
	fmt.Fprintf(&b, "\nbad runs stopped: %d of %d (median stop at %.0f%% of the run); judged bad at their end, not stopped: %d; caught: %d of %d\n",
		badStopped, bad, 100*median, badEnded, badStopped+badEnded, bad)
	for _, l := range corpusBad {
		fmt.Fprintf(&b, "  %s stopped: %d of %d; at end: %d; caught: %d of %d\n", l, stoppedBy[l], byLabel[l], endedBy[l],
			stoppedBy[l]+endedBy[l], byLabel[l])
	}
	fmt.Fprintf(&b, "healthy runs stopped: %d of %d; judged bad at their end: %d\ncrashes: %d; runs not read: %d; runs absent from this copy (skipped): %d\n",
		healthyStopped, healthy, healthyEnded, crashes, unread, absent)
	return b.String()
}
