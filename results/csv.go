package results

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/rlsweep/rlsweep/sweeps"
)

// WriteCSV writes results.csv: one row per trial: id, config, seed, each parameter, outcome, objective,
// stop rule, steps, wall seconds, error, and for a trial early_terminate stopped the decision step,
// its configuration's value there and the cutoff it missed, then where its last segment attempt ran
// (hw_*: host, CPU, GPU model, GPU memory in MiB, driver, CUDA version, precision settings), and the
// resources.precision setting it ran under (precision_setting, empty without one) and, for a confirm
// re-run, the GPU class it re-ran on (confirm_gpu_class, empty for the search's trials), then for a
// sweep with several objectives the first step its windowed objective reached env_steps's target
// (target_step, empty when it did not or there is none) and its configuration's Pareto rank
// (pareto_rank: 1 on the front, empty when not ranked).
func WriteCSV(w io.Writer, res *SweepResults) error {
	cw := csv.NewWriter(w)
	// The fixed columns are the names a parameter may not take (sweeps.ReservedParamNames): the trial's
	// identity, then the parameters, then its outcome.
	fixed := sweeps.ReservedParamNames
	header := append(append(slices.Clone(fixed[:3]), res.Params...), fixed[3:]...)
	if err := cw.Write(header); err != nil {
		return err
	}
	rank := map[int]int{}
	for _, p := range res.Pareto {
		rank[p.Config] = p.Rank
	}
	for _, t := range res.Trials {
		row := []string{t.TrialID, strconv.Itoa(t.Config), strconv.FormatInt(t.Seed, 10)}
		for _, p := range res.Params {
			row = append(row, formatParam(t.Params[p]))
		}
		obj := ""
		if t.Objective != nil {
			obj = strconv.FormatFloat(*t.Objective, 'g', -1, 64)
		}
		row = append(row, t.Outcome, obj, t.StopRule, strconv.FormatInt(t.Steps, 10),
			strconv.FormatFloat(t.WallSeconds, 'f', 3, 64), inertCell(t.Error))
		if p := t.Pruning; p != nil {
			row = append(row, strconv.FormatInt(p.Step, 10), optFloat(p.Value), optFloat(p.Cutoff))
		} else {
			row = append(row, "", "", "")
		}
		row = append(row, hardwareCells(t.Hardware)...)
		row = append(row, t.Precision, t.GPUClass, "", "")
		if t.TargetStep > 0 {
			row[len(row)-2] = strconv.FormatInt(t.TargetStep, 10)
		}
		if r := rank[t.Config]; r > 0 && t.GPUClass == "" {
			row[len(row)-1] = strconv.Itoa(r)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// hardwareCells are the hw_* columns of a trial: where its last segment attempt ran.
func hardwareCells(h *Hardware) []string {
	if h == nil {
		return []string{"", "", "", "", "", "", ""}
	}
	mem := ""
	if m := h.GPUMemoryMiB(); m > 0 {
		mem = strconv.Itoa(m)
	}
	return []string{inertCell(cmp.Or(h.Host, h.Worker)), inertCell(h.CPU), inertCell(h.GPUNames()), mem,
		inertCell(h.Driver), inertCell(h.CUDA), inertCell(h.PrecisionLine())}
}

func formatParam(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return inertCell(v)
	default:
		return fmt.Sprint(v)
	}
}

func optFloat(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

func fmtParams(params map[string]any) string { return fmt.Sprintf("%#v", params) }

// inertCell keeps a text cell from being read as a formula by a spreadsheet opening results.csv
// (CSV injection, as OWASP describes it): text starting with =, +, -, @, a tab or a carriage return
// gets a leading apostrophe. Numbers are written by strconv, not through here, so they stay numbers.
func inertCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
