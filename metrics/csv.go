package metrics

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// csvStepColumns are the columns that hold a CSV row's step, in the order they are looked for.
var csvStepColumns = []string{sb3StepKey, "step", "global_step"}

// csvColumnKey is a header cell as the step columns are matched: trimmed, lower case, with spaces and
// hyphens as underscores ("time/total timesteps", written by a hand-rolled SB3-style logger, is
// time/total_timesteps).
func csvColumnKey(c string) string {
	return strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(c)))
}

// CSVTail follows a CSV metrics file such as Stable-Baselines3's progress.csv: a header row of keys
// ("rollout/ep_rew_mean,time/total_timesteps,train/value_loss,..."), then one row per logging call,
// with an empty cell for a key not logged that time. Each row is one record; its step is the
// time/total_timesteps column (else "step", else "global_step"; matched by csvColumnKey). Cells that are empty or not numbers
// are left out of the record; "nan", "inf" and "-inf" are values. It is not safe for concurrent use.
//
// The header is the first line. SB3 rewrites the whole file, header first, when a key appears for the first time (train/ keys
// arrive with the second row): when the header on disk no longer matches, the file is read again
// from its start and the rows already returned are skipped. A row whose cell count differs from the
// header's, whose step is missing or not an integer ≥ 0, or lower than the previous row's, is counted
// as malformed. A partial last line is waited for.
//
// It also reads SB3's Monitor files (monitor.csv): a first line "#{...}" of metadata, a header "r,l,t",
// then one row per finished episode (return, length, seconds). Each episode is a record with reward r
// and episode_length l, at the step that sums the lengths so far (the environment's own steps).
type CSVTail struct {
	tail     lineTail
	stats    ReaderStats
	mapping  Mapping
	lastStep int64
	out      []Record

	header   []byte   // the header line as written, to notice a rewrite
	names    []string // each column's metric name, through the mapping
	scales   []float64
	stepCol  int
	stepName string
	rows     int // data rows consumed since the header was read
	skip     int // rows to skip after a rewrite: they were returned before

	comment []byte // a Monitor file's first line ("#{...}"), which stands before its header
	monitor bool   // a Monitor file: the step is the running sum of the l column
	lenCol  int    // the Monitor file's l column
}

// Monitor files' columns: the episode's return, length and wall-clock seconds since the file began.
const (
	monitorReturn = "r"
	monitorLength = "l"
	monitorTime   = "t"
)

// NewCSVTail returns a tail of the CSV file at path; mapping renames columns (nil keeps them).
func NewCSVTail(path string, mapping Mapping) *CSVTail {
	return &CSVTail{tail: lineTail{path: path}, mapping: mapping, lastStep: -1, stepCol: -1}
}

// Poll returns the records of the rows appended since the previous Poll.
func (t *CSVTail) Poll() ([]Record, error) {
	if t.header != nil && t.tail.f != nil {
		buf := make([]byte, len(t.header)+1)
		n, _ := t.tail.f.ReadAt(buf, 0)
		if n < len(buf) || !bytes.Equal(buf[:len(t.header)], t.header) || (buf[len(t.header)] != '\n' && buf[len(t.header)] != '\r') {
			// Rewritten with a new header: read it again, skipping the rows returned already.
			t.skip, t.rows, t.header = t.skip+t.rows, 0, nil
			t.tail.reset()
		}
	}
	err := t.tail.poll(t)
	out := t.out
	t.out = nil
	return out, err
}

// Stats returns the counts of records read and rows dropped so far.
func (t *CSVTail) Stats() ReaderStats { return t.stats }

// Close releases the file.
func (t *CSVTail) Close() error { return t.tail.close() }

func (t *CSVTail) tooLong(n int64) {
	t.malformed(n, fmt.Sprintf("line longer than %d bytes, skipped", MaxLineBytes))
	if t.header != nil {
		t.rows++
	}
}

func (t *CSVTail) restart() {
	t.header, t.rows, t.skip, t.lastStep, t.comment, t.monitor = nil, 0, 0, -1, nil, false
}

func (t *CSVTail) malformed(n int64, why string) {
	t.stats.Malformed++
	t.stats.LastError = fmt.Sprintf("%s:%d: %s", t.tail.path, n, why)
}

// trimAll returns cells with surrounding white space removed.
func trimAll(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = strings.TrimSpace(c)
	}
	return out
}

// splitCSV splits one CSV line into its cells; quotes are honoured when there are any.
func splitCSV(line []byte) ([]string, error) {
	if bytes.IndexByte(line, '"') < 0 {
		return strings.Split(string(line), ","), nil
	}
	r := csv.NewReader(bytes.NewReader(line))
	r.FieldsPerRecord = -1
	return r.Read()
}

func (t *CSVTail) line(b []byte, n int64) {
	if t.header == nil {
		if n == 1 && bytes.HasPrefix(b, []byte("#")) {
			t.comment = append([]byte{}, b...) // a Monitor file's metadata: its header comes next
			return
		}
		if n > 1 && !(n == 2 && t.comment != nil) {
			// The header is the first line (where a rewrite is looked for); without one no row can be read.
			if len(bytes.TrimSpace(b)) > 0 {
				t.malformed(n, "no header row: the file's first line is not one")
			}
			return
		}
		cells, err := splitCSV(b)
		if err != nil {
			t.malformed(n, "header: "+err.Error())
			return
		}
		t.header = append([]byte{}, b...)
		if t.comment != nil {
			// The rewrite check compares the file's beginning with what stood before the first row.
			t.header = append(append(append([]byte{}, t.comment...), '\n'), b...)
		}
		t.names, t.scales, t.stepCol = make([]string, len(cells)), make([]float64, len(cells)), -1
		for i, c := range cells {
			c = strings.TrimSpace(c)
			t.names[i], t.scales[i] = c, 1
			if tg, ok := t.mapping[c]; ok {
				t.names[i], t.scales[i] = tg.Metric, tg.Scale
			}
		}
		t.monitor = t.comment != nil && slices.Equal(trimAll(cells), []string{monitorReturn, monitorLength, monitorTime})
		if t.monitor {
			t.names = []string{Reward, EpisodeLength, ""}
			t.lenCol, t.stepName = 1, "the sum of episode lengths (l)"
			return
		}
		for _, want := range csvStepColumns {
			for i, c := range cells {
				if t.stepCol < 0 && csvColumnKey(c) == want {
					t.stepCol, t.stepName = i, strings.TrimSpace(c)
				}
			}
		}
		return
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	t.rows++
	if t.skip > 0 {
		t.skip--
		return
	}
	cells, err := splitCSV(b)
	switch {
	case err != nil:
		t.malformed(n, err.Error())
		return
	case len(cells) != len(t.names):
		t.malformed(n, fmt.Sprintf("got %d cells, want %d (the header's)", len(cells), len(t.names)))
		return
	case t.stepCol < 0 && !t.monitor:
		t.malformed(n, fmt.Sprintf("no step column: the header has none of %s", QuotedList(csvStepColumns)))
		return
	}
	stepCell := ""
	if t.monitor {
		l, ok := parseConsoleNumber([]byte(cells[t.lenCol]))
		if !ok || l < 0 || l != math.Trunc(l) || l > 1<<40 {
			t.malformed(n, fmt.Sprintf("l: got %q, want an episode length, an integer ≥ 0", cells[t.lenCol]))
			return
		}
		stepCell = strconv.FormatInt(max(t.lastStep, 0)+int64(l), 10)
	} else {
		stepCell = cells[t.stepCol]
	}
	sv, ok := parseConsoleNumber([]byte(stepCell))
	if !ok || sv < 0 || sv != math.Trunc(sv) || sv > 1<<62 {
		t.malformed(n, fmt.Sprintf("%s: got %q, want an integer ≥ 0", t.stepName, stepCell))
		return
	}
	step := int64(sv)
	if step < t.lastStep {
		t.malformed(n, fmt.Sprintf("step: got %d, want ≥ %d (the previous row's step)", step, t.lastStep))
		return
	}
	vals := make(map[string]float64, len(cells))
	for i, c := range cells {
		if t.names[i] == "" {
			continue
		}
		if v, ok := parseConsoleNumber([]byte(c)); ok && !strings.ContainsAny(strings.TrimSpace(c), " \t") {
			vals[t.names[i]] = v * t.scales[i]
		}
	}
	t.lastStep = step
	t.stats.Records++
	t.stats.Steps = StepsTrainer + " (" + t.stepName + ")"
	if t.stepName == sb3StepKey || t.monitor {
		t.stats.Steps = StepsEnv + " (" + sb3StepKey + ")"
	}
	t.out = append(t.out, Record{Step: step, Values: vals})
}
