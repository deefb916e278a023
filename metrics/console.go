package metrics

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Step axes a reader reports in ReaderStats.Steps.
const (
	StepsEnv        = "environment steps"
	StepsIterations = "iterations (the trainer's own unit: set trainer.metrics.steps_per_iteration to convert)"
	StepsTrainer    = "the trainer's own step"
)

// consolePresets maps the labels a framework prints in its console table to canonical metrics, as
// presets maps its TensorBoard tags. The SB3 console table and progress.csv print the same keys as its
// TensorBoard tags, so the sb3 preset serves them unchanged.
//
// rsl_rl's OnPolicyRunner (and the Logger of later versions) prints one block per learning
// iteration; the labels changed across versions ("Value function loss" → "Mean value_function loss",
// "Mean action noise std" → "Mean action std", "Computation: N steps/s" → "Steps per second"), and
// every spelling is mapped. The entropy it prints ("Mean entropy loss") is the policy's mean entropy.
var consolePresets = map[string]Mapping{
	PresetRSLRL: {
		"Mean reward":              {Reward, 1},
		"Mean episode length":      {EpisodeLength, 1},
		"Value function loss":      {ValueLoss, 1},
		"Mean value_function loss": {ValueLoss, 1},
		"Mean value loss":          {ValueLoss, 1},
		"Surrogate loss":           {PolicyLoss, 1},
		"Mean surrogate loss":      {PolicyLoss, 1},
		"Mean entropy loss":        {Entropy, 1},
		"Mean action noise std":    {ActionStd, 1},
		"Mean action std":          {ActionStd, 1},
		"Computation":              {FPS, 1},
		"Steps per second":         {FPS, 1},
		"Learning rate":            {LearningRate, 1},
		"Learning Rate":            {LearningRate, 1},
	},
}

// consoleStepLabels are the rsl_rl labels that print the environment steps done so far.
var consoleStepLabels = map[string]bool{"Total timesteps": true, "Total steps": true}

// parseConsoleNumber reads the first word of s as a number the way Python, C and numpy print one:
// "1.5", "-3e+05", "nan", "-nan", "inf", "-inf"; a trailing "s" (seconds) is allowed.
func parseConsoleNumber(s []byte) (float64, bool) {
	s = bytes.TrimSpace(s)
	if i := bytes.IndexAny(s, " \t"); i >= 0 {
		s = s[:i]
	}
	if len(s) == 0 {
		return 0, false
	}
	w := string(s)
	if v, ok := parseFloatWord(w); ok {
		return v, true
	}
	if n := len(w); n > 1 && w[n-1] == 's' && w[n-2] >= '0' && w[n-2] <= '9' {
		return parseFloatWord(w[:n-1])
	}
	return 0, false
}

func parseFloatWord(w string) (float64, bool) {
	body := strings.TrimLeft(w, "+-")
	if len(w)-len(body) > 1 {
		return 0, false
	}
	switch strings.ToLower(body) {
	case "nan":
		return math.NaN(), true
	case "":
		return 0, false
	}
	if c := body[0]; c != '.' && (c < '0' || c > '9') && c != 'i' && c != 'I' || strings.ContainsAny(body, "_xX") {
		return 0, false // ParseFloat also takes "0x1p3" and "1_000"; a console prints neither
	}
	v, err := strconv.ParseFloat(w, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return v, true
		}
		return 0, false
	}
	return v, true
}

// allOf reports whether b is at least n bytes, all c.
func allOf(b []byte, c byte, n int) bool {
	if len(b) < n {
		return false
	}
	for _, x := range b {
		if x != c {
			return false
		}
	}
	return true
}

// RSLRLConsoleTail follows the console output of an rsl_rl trainer (its stdout, as the worker stores
// it) and returns one record per learning iteration block. It is not safe for concurrent use.
//
// A block starts at a line of '#' or at the "Learning iteration N/M" header and ends at its "ETA:"
// line, at the next block's start, or when the trainer exits (Finish). Within a block every
// "label: number" line is a value, named through the mapping (labels it does not name are kept as
// printed; "Mean episode X" becomes "Episode/X", rsl_rl's TensorBoard tag for it). ANSI escape codes are
// removed first. Lines outside blocks (anything else the trainer prints) are ignored; inside a block,
// a known label whose value does not parse is counted as malformed.
//
// The record's step: iteration × steps_per_iteration when that is configured (iteration i counts
// as (i+1) × N steps, those collected once it is done); else the "Total timesteps" (or "Total steps")
// line, which counts from the start of the trainer process, so a process whose first block is
// iteration k > 0 (it resumed) is taken to have done k × (its first block's steps) before; else the
// iteration number itself, and Stats().Steps says so.
type RSLRLConsoleTail struct {
	tail         lineTail
	stats        ReaderStats
	mapping      Mapping
	stepsPerIter int64
	lastStep     int64
	out          []Record

	inBlock  bool
	iter     int64
	hasIter  bool
	total    int64
	hasTotal bool
	values   map[string]float64

	procTotal  int64 // the last Total timesteps of the current trainer process; -1 before one
	procOffset int64 // steps its first block had done before it started
	perIter    int64 // steps per iteration, learned from a process's first Total timesteps; 0 before
}

// NewRSLRLConsoleTail returns a tail of the console log at path; mapping names the labels (nil: the
// rsl_rl console preset), stepsPerIteration converts iterations to environment steps (0: don't).
func NewRSLRLConsoleTail(path string, mapping Mapping, stepsPerIteration int64) *RSLRLConsoleTail {
	if mapping == nil {
		mapping = consolePresets[PresetRSLRL]
	}
	return &RSLRLConsoleTail{tail: lineTail{path: path}, mapping: mapping, stepsPerIter: stepsPerIteration,
		lastStep: -1, procTotal: -1}
}

// Poll returns the records of the blocks completed since the previous Poll.
func (t *RSLRLConsoleTail) Poll() ([]Record, error) {
	err := t.tail.poll(t)
	out := t.out
	t.out = nil
	return out, err
}

// Finish returns the block still open: the trainer has exited.
func (t *RSLRLConsoleTail) Finish() []Record {
	t.endBlock()
	out := t.out
	t.out = nil
	return out
}

// Stats returns the counts of records read and lines dropped so far, and the step axis.
func (t *RSLRLConsoleTail) Stats() ReaderStats { return t.stats }

// Close releases the file.
func (t *RSLRLConsoleTail) Close() error { return t.tail.close() }

func (t *RSLRLConsoleTail) tooLong(n int64) {
	t.malformed(n, fmt.Sprintf("line longer than %d bytes, skipped", MaxLineBytes))
}

func (t *RSLRLConsoleTail) restart() {
	t.endBlock()
	t.lastStep, t.procTotal, t.procOffset, t.perIter = -1, -1, 0, 0
}

func (t *RSLRLConsoleTail) malformed(n int64, why string) {
	t.stats.Malformed++
	t.stats.LastError = fmt.Sprintf("%s:%d: %s", t.tail.path, n, why)
}

func (t *RSLRLConsoleTail) line(raw []byte, n int64) {
	text := bytes.TrimSpace(consoleText(raw))
	switch {
	case allOf(text, '#', 10):
		t.endBlock()
		t.inBlock = true
		return
	case bytes.Contains(text, []byte("Learning iteration ")):
		if t.hasIter {
			t.endBlock() // a header without a line of '#' before it
		}
		t.inBlock = true
		rest := text[bytes.Index(text, []byte("Learning iteration "))+len("Learning iteration "):]
		if i := bytes.IndexByte(rest, '/'); i > 0 {
			rest = rest[:i]
		}
		it, err := strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
		if err != nil || it < 0 {
			t.malformed(n, fmt.Sprintf("iteration: got %q, want an integer ≥ 0", rest))
			return
		}
		t.iter, t.hasIter = it, true
		return
	case !t.inBlock || len(text) == 0 || allOf(text, '-', 10):
		return
	}
	colon := bytes.IndexByte(text, ':')
	if colon <= 0 {
		return
	}
	label := string(bytes.TrimSpace(text[:colon]))
	if label == "ETA" {
		t.endBlock()
		return
	}
	v, ok := parseConsoleNumber(text[colon+1:])
	if consoleStepLabels[label] {
		if !ok || v < 0 || v != math.Trunc(v) || v > 1<<62 {
			t.malformed(n, fmt.Sprintf("%s: got %q, want an integer ≥ 0", label, bytes.TrimSpace(text[colon+1:])))
			return
		}
		t.total, t.hasTotal = int64(v), true
		return
	}
	_, known := t.mapping[label]
	if !ok {
		if known {
			t.malformed(n, fmt.Sprintf("%s: got %q, want a number", label, bytes.TrimSpace(text[colon+1:])))
		}
		return // a run name, a duration as h:mm:ss, a warning the trainer printed
	}
	if !known {
		if ep, isEp := strings.CutPrefix(label, "Mean episode "); isEp {
			label = "Episode/" + ep
		}
	}
	name, x := t.mapping.Lookup(label, v)
	if t.values == nil {
		t.values = make(map[string]float64, 16)
	}
	t.values[name] = x
}

// endBlock turns the block read so far into a record.
func (t *RSLRLConsoleTail) endBlock() {
	defer func() {
		t.inBlock, t.hasIter, t.hasTotal, t.values = false, false, false, nil
	}()
	if !t.hasIter && !t.hasTotal {
		if len(t.values) > 0 {
			t.malformed(t.tail.line, "a block without a \"Learning iteration\" header or a \"Total timesteps\" line; dropped")
		}
		return
	}
	var step int64
	switch {
	case t.stepsPerIter > 0 && t.hasIter:
		step = (t.iter + 1) * t.stepsPerIter
		t.stats.Steps = fmt.Sprintf("%s (iteration × %d)", StepsEnv, t.stepsPerIter)
	case t.hasTotal:
		if t.procTotal < 0 || t.total < t.procTotal {
			// The first block of a trainer process: one iteration's steps, unless the trainer
			// restarted from iteration k and had done k of them before.
			t.procOffset, t.perIter = 0, 0
			if t.hasIter {
				t.procOffset, t.perIter = t.iter*t.total, t.total
			}
		}
		t.procTotal = t.total
		step = t.total + t.procOffset
		t.stats.Steps = StepsEnv + " (Total timesteps)"
	case t.perIter > 0:
		// A block without Total timesteps in a run whose earlier blocks had it (one cut short when
		// the trainer stopped).
		step = (t.iter + 1) * t.perIter
	default:
		step = t.iter
		t.stats.Steps = StepsIterations
	}
	if step < t.lastStep {
		t.malformed(t.tail.line, fmt.Sprintf("step: got %d, want ≥ %d (the previous record's step)", step, t.lastStep))
		return
	}
	t.lastStep = step
	vals := t.values
	if vals == nil {
		vals = map[string]float64{}
	}
	t.stats.Records++
	t.out = append(t.out, Record{Step: step, Values: vals})
}

// SB3ConsoleTail follows the tables Stable-Baselines3's logger prints to stdout:
//
//	-----------------------------------
//	| rollout/           |            |
//	|    ep_rew_mean     | 21.5       |
//	| time/              |            |
//	|    total_timesteps | 4096       |
//	-----------------------------------
//
// Each table becomes one record whose keys join the section and the key ("rollout/ep_rew_mean", the
// same names as SB3's TensorBoard tags, so the sb3 preset maps them) and whose step is
// time/total_timesteps. A table is complete at its closing line of dashes. Lines that are not table
// rows are ignored; a table without time/total_timesteps, or whose step is lower than the previous
// one, is counted as malformed. It is not safe for concurrent use.
type SB3ConsoleTail struct {
	tail     lineTail
	stats    ReaderStats
	mapping  Mapping
	lastStep int64
	out      []Record

	section string
	values  map[string]float64
	step    int64
	hasStep bool
	rows    int
}

// sb3StepKey is the key whose value is the step of SB3's records.
const sb3StepKey = "time/total_timesteps"

// NewSB3ConsoleTail returns a tail of the console log at path; mapping renames keys (nil: the sb3 preset).
func NewSB3ConsoleTail(path string, mapping Mapping) *SB3ConsoleTail {
	if mapping == nil {
		mapping = presets[PresetSB3]
	}
	return &SB3ConsoleTail{tail: lineTail{path: path}, mapping: mapping, lastStep: -1}
}

// Poll returns the records of the tables completed since the previous Poll.
func (t *SB3ConsoleTail) Poll() ([]Record, error) {
	err := t.tail.poll(t)
	out := t.out
	t.out = nil
	return out, err
}

// Finish returns the table still open (its closing line never came): the trainer has exited.
func (t *SB3ConsoleTail) Finish() []Record {
	t.endTable(t.tail.line)
	out := t.out
	t.out = nil
	return out
}

// Stats returns the counts of records read and lines dropped so far.
func (t *SB3ConsoleTail) Stats() ReaderStats { return t.stats }

// Close releases the file.
func (t *SB3ConsoleTail) Close() error { return t.tail.close() }

func (t *SB3ConsoleTail) tooLong(n int64) {
	t.malformed(n, fmt.Sprintf("line longer than %d bytes, skipped", MaxLineBytes))
}

func (t *SB3ConsoleTail) restart() {
	t.endTable(t.tail.line)
	t.lastStep = -1
}

func (t *SB3ConsoleTail) malformed(n int64, why string) {
	t.stats.Malformed++
	t.stats.LastError = fmt.Sprintf("%s:%d: %s", t.tail.path, n, why)
}

func (t *SB3ConsoleTail) line(raw []byte, n int64) {
	text := bytes.TrimSpace(consoleText(raw))
	if allOf(text, '-', 3) {
		t.endTable(n)
		return
	}
	if len(text) < 5 || text[0] != '|' || text[len(text)-1] != '|' {
		return
	}
	inner := text[1 : len(text)-1]
	bar := bytes.IndexByte(inner, '|')
	if bar < 0 || bytes.IndexByte(inner[bar+1:], '|') >= 0 {
		return
	}
	keyCell, valCell := inner[:bar], bytes.TrimSpace(inner[bar+1:])
	key := string(bytes.TrimSpace(keyCell))
	if key == "" {
		return
	}
	t.rows++
	if len(valCell) == 0 {
		if strings.HasSuffix(key, "/") {
			t.section = key
		}
		return
	}
	// SB3 indents a key under its section by three spaces after the "| ".
	if t.section != "" && bytes.HasPrefix(keyCell, []byte("   ")) {
		key = t.section + key
	} else {
		t.section = ""
	}
	v, ok := parseConsoleNumber(valCell)
	if !ok {
		return // a string value, or one SB3 cut short with "..."
	}
	if key == sb3StepKey {
		if v < 0 || v != math.Trunc(v) || v > 1<<62 {
			t.malformed(n, fmt.Sprintf("%s: got %q, want an integer ≥ 0", key, valCell))
			return
		}
		t.step, t.hasStep = int64(v), true
	}
	name, x := t.mapping.Lookup(key, v)
	if t.values == nil {
		t.values = make(map[string]float64, 24)
	}
	t.values[name] = x
}

func (t *SB3ConsoleTail) endTable(n int64) {
	defer func() { t.section, t.values, t.hasStep, t.rows = "", nil, false, 0 }()
	if t.rows == 0 {
		return
	}
	switch {
	case !t.hasStep:
		t.malformed(n, "table without "+sb3StepKey+"; dropped")
		return
	case t.step < t.lastStep:
		t.malformed(n, fmt.Sprintf("step: got %d, want ≥ %d (the previous record's step)", t.step, t.lastStep))
		return
	}
	t.lastStep = t.step
	t.stats.Records++
	t.stats.Steps = StepsEnv + " (" + sb3StepKey + ")"
	t.out = append(t.out, Record{Step: t.step, Values: t.values})
}
