package probes

import (
	"fmt"
	"slices"
	"strings"
)

// Report is the outcome of a probe stage: every result in ladder order and the diagnosis.
type Report struct {
	Passed  bool     `json:"passed"`
	Results []Result `json:"results"`
	// Failed is the lowest failing probe on the ladder; empty when all passed.
	Failed ID `json:"failed,omitempty"`
	// Diagnosis names the likely defect: "probe 3 fails while probes 1–2 pass: the bug is in what 3
	// adds: discounting, GAE or done-masking broken".
	Diagnosis string `json:"diagnosis"`
}

// Diagnose orders results along the ladder (discrete before continuous) and names the lowest failing
// probe, since every probe above it depends on what it checks. A report passes when no probe failed
// and at least one ran; skipped probes (an action space the trainer does not support) are neither. A
// ladder skipped in part fails: a trainer that supports an action space runs all of its probes, and
// one that ran probe 1 only has not shown discounting, advantages or anything above.
func Diagnose(results []Result) Report {
	rs := slices.Clone(results)
	slices.SortStableFunc(rs, func(a, b Result) int {
		if c := boolCmp(isContinuous(a.Probe), isContinuous(b.Probe)); c != 0 {
			return c
		}
		return a.Level - b.Level
	})
	r := Report{Results: rs, Passed: true}
	ran := 0
	for _, x := range rs {
		if x.Skipped {
			continue
		}
		ran++
		if !x.Passed && r.Failed == "" {
			r.Passed, r.Failed = false, x.Probe
			r.Diagnosis = diagnosis(x, rs)
		}
	}
	if r.Passed {
		if partial := partlySkipped(rs); partial != "" {
			r.Passed, r.Diagnosis = false, partial
			return r
		}
	}
	switch {
	case ran == 0:
		r.Passed, r.Diagnosis = false, "no probe ran: the trainer skipped every probe (it supports neither action space?)"
	case r.Passed:
		r.Diagnosis = fmt.Sprintf("all %d probes pass", ran)
	}
	return r
}

// partlySkipped names the probes skipped on a ladder (an action space) of which others ran, or "".
func partlySkipped(rs []Result) string {
	for _, continuous := range []bool{false, true} {
		var ran, skipped []string
		for _, x := range rs {
			if isContinuous(x.Probe) != continuous {
				continue
			}
			if x.Skipped {
				skipped = append(skipped, string(x.Probe))
			} else {
				ran = append(ran, string(x.Probe))
			}
		}
		if len(ran) > 0 && len(skipped) > 0 {
			return fmt.Sprintf("probes %s skipped while %s ran: a trainer that supports an action space must run its whole ladder",
				strings.Join(skipped, ", "), strings.Join(ran, ", "))
		}
	}
	return ""
}

// disableHint ends every diagnosis that is not about the trainer's learning.
const disableHint = "see docs/probes.md, or turn the probe stage off with `probes: {enabled: false}`"

func diagnosis(failed Result, rs []Result) string {
	switch failed.Fault {
	case FaultNoRecord:
		same, ran := 0, 0
		for _, x := range rs {
			if !x.Skipped {
				ran++
				if x.Fault == FaultNoRecord {
					same++
				}
			}
		}
		if len(rs) == 1 {
			// The sweep's probe stage stops after an external trainer's first run when it faults.
			return fmt.Sprintf("the trainer does not speak the probe protocol: it exited 0 on probe %s, its first probe run, without writing a result to "+
				EnvProbeResult+" (the file the protocol names for the probe's JSON record), so the stage stopped there and ran no other probe; "+
				"teach it the protocol (a result per probe, or exit 3 to decline one): %s", failed.Probe, disableHint)
		}
		return fmt.Sprintf("the trainer does not speak the probe protocol: it exited 0 without writing a result to "+
			EnvProbeResult+" on %d of %d probes, so the probes say nothing about its learning; teach it the protocol "+
			"(a result per probe, or exit 3 to decline one): %s", same, ran, disableHint)
	case FaultCrashed:
		return fmt.Sprintf("the trainer crashed on probe %s%s, so the probes say nothing about its learning; fix the crash, %s. %s",
			failed.Probe, stoppedAfter(rs), disableHint, failed.Error)
	case FaultBadRecord:
		return fmt.Sprintf("the trainer's result on probe %s does not follow the probe protocol%s; %s. %s",
			failed.Probe, stoppedAfter(rs), disableHint, failed.Error)
	}
	p, _ := Lookup(failed.Probe)
	what := fmt.Sprintf("probe %s fails", failed.Probe)
	if failed.Error != "" {
		what += " (" + failed.Error + ")"
	}
	if p.Level == 1 {
		return fmt.Sprintf("%s: %s", what, p.Adds)
	}
	below := fmt.Sprintf("probes 1–%d pass", p.Level-1)
	if p.Level == 2 {
		below = "probe 1 passes"
	}
	return fmt.Sprintf("%s while %s: the bug is in what %s adds: %s", what, below, failed.Probe, p.Adds)
}

// stoppedAfter notes a stage that stopped after its first run (one result): the other probes were not run.
func stoppedAfter(rs []Result) string {
	if len(rs) == 1 {
		return " (its first probe run: the stage stopped there and ran no other probe)"
	}
	return ""
}

func isContinuous(id ID) bool { return len(id) > 0 && id[len(id)-1] == 'c' }

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
