package runner

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rlsweep/rlsweep/metrics"
)

func TestRecentLinesKeepsLast64InOrder(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 200} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var r recentLines
			for i := 1; i <= n; i++ {
				r.add([]byte(`{"step":` + strconv.Itoa(i) + "}\n"))
			}
			got := r.all(nil)
			want := min(n, dumpRecords)
			if len(got) != want {
				t.Fatalf("all() holds %d records, want %d", len(got), want)
			}
			for i, raw := range got {
				var line string
				if err := json.Unmarshal(raw, &line); err != nil {
					t.Fatalf("record %d %s: %v", i, raw, err)
				}
				if w := `{"step":` + strconv.Itoa(n-want+1+i) + "}"; line != w {
					t.Errorf("record %d = %q, want %q", i, line, w)
				}
			}
		})
	}
}

// Every record in the dump must be valid JSON whatever bytes a custom metric name holds, or the whole
// divergence dump cannot be encoded.
func TestRecentLinesAreValidJSON(t *testing.T) {
	for _, line := range []string{
		"{\"step\":1,\"a\x7fb\":1}\n",       // DEL: Go's %q writes \x7f
		"{\"step\":1,\"a\U000e0001b\":1}\n", // a non-printable rune outside the BMP: %q writes \U000e0001
		"{\"step\":1,\"reward\":NaN}\n",
		"{\"step\":1,\"\\\"q\\\"\":1}\n",
		"{\"step\":1,\"\xff\":1}\n",
	} {
		var r recentLines
		r.add([]byte(line))
		recs := r.all(nil)
		b, err := json.Marshal(recs)
		if err != nil {
			t.Errorf("dump of %q does not encode: %v", line, err)
			continue
		}
		var back []string
		if err := json.Unmarshal(b, &back); err != nil || len(back) != 1 {
			t.Errorf("dump of %q = %s, want one JSON string: %v", line, b, err)
			continue
		}
		if utf8.ValidString(line) && back[0] != strings.TrimSuffix(line, "\n") {
			t.Errorf("dump of %q decodes to %q, want the line", line, back[0])
		}
	}
}

func rec(step int64, values map[string]float64, ckpt string) metrics.Record {
	return metrics.Record{Step: step, Values: values, Checkpoint: ckpt}
}

// A resumed attempt: the trainer announces the checkpoint it resumed from again, with no metrics, then
// trains on. The announcement adds no line (it would blank the stored line of that step); the first new
// record is the first line, which is when the trial's stored history must be taken in.
func TestSegmentLogResumed(t *testing.T) {
	var out bytes.Buffer
	l := NewSegmentLog(&out, "reward", 2000)
	if l.LastStep() != 2000 || l.FirstLine() != -1 {
		t.Fatalf("fresh log: last step %d, first line %d; want 2000, -1", l.LastStep(), l.FirstLine())
	}
	steps := []struct {
		r     metrics.Record
		added Added
	}{
		{rec(2000, nil, "ckpt-2000"), Added{}}, // the resume checkpoint again
		{rec(3000, map[string]float64{"reward": 3}, ""), Added{First: true, Line: true}},
		{rec(3000, nil, "ckpt-3000"), Added{}}, // announces the step just read
		{rec(4000, map[string]float64{"reward": 4, "entropy": 0.5}, ""), Added{Line: true}},
		{rec(5000, nil, "ckpt-5000"), Added{Line: true}}, // a new step, checkpoint only: a line
	}
	for i, s := range steps {
		got, err := l.Add(s.r)
		if err != nil || got != s.added {
			t.Errorf("record %d (step %d): Add = %+v, %v; want %+v", i, s.r.Step, got, err, s.added)
		}
	}
	if l.Records() != 5 || l.Lines() != 3 || l.FirstLine() != 3000 || l.LastStep() != 5000 {
		t.Errorf("records %d, lines %d, first line %d, last step %d; want 5, 3, 3000, 5000", l.Records(), l.Lines(), l.FirstLine(), l.LastStep())
	}
	if v, ok := l.Objective(); !ok || v != 4 {
		t.Errorf("objective %v %v, want 4", v, ok)
	}
	if l.Last()["entropy"] != 0.5 || l.MissingMetric() != nil {
		t.Errorf("last %v, missing %v; want entropy 0.5 and no missing metric", l.Last(), l.MissingMetric())
	}
	if got := strings.Count(out.String(), "\n"); got != 3 {
		t.Errorf("%d canonical lines written, want 3: %q", got, out.String())
	}
}

// Records that never carry the objective: the names they did carry, sorted; none at all: nil.
func TestSegmentLogMissingMetric(t *testing.T) {
	l := NewSegmentLog(io.Discard, "reward", 0)
	if l.MissingMetric() != nil {
		t.Errorf("no record: MissingMetric = %v, want nil", l.MissingMetric())
	}
	for _, r := range []metrics.Record{rec(1, map[string]float64{"rew": 1, "loss": 2}, ""), rec(2, map[string]float64{"len": 3}, "")} {
		if _, err := l.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.MissingMetric(); !slices.Equal(got, []string{"len", "loss", "rew"}) {
		t.Errorf("MissingMetric = %v, want [len loss rew]", got)
	}
	l.Take(rec(2, map[string]float64{"reward": 9}, ""))
	if v, ok := l.Objective(); !ok || v != 9 || l.MissingMetric() != nil {
		t.Errorf("after a record with the objective: objective %v %v, missing %v; want 9, nil", v, ok, l.MissingMetric())
	}
}

// TestSegmentLogTargetStep: the log notes the first step whose windowed objective (the mean over the
// last tenth of the steps so far) reaches the target, not the first noisy value that does.
func TestSegmentLogTargetStep(t *testing.T) {
	for _, c := range []struct {
		maximize bool
		target   float64
		values   []float64 // one record each 1,000 steps
		want     int64     // 0: never
	}{
		// A spike at 3,000 reaches -200 alone; the window (steps 2,700–3,000 hold one record) does too.
		{true, -200, []float64{-900, -600, -150, -400, -190, -180, -170}, 3000},
		// Rising steadily: the window of one record each reaches it at 5,000.
		{true, -200, []float64{-900, -700, -500, -300, -200, -100}, 5000},
		{true, -200, []float64{-900, -800, -700}, 0},
		// Minimized: a loss falling to 0.1.
		{false, 0.1, []float64{1, 0.5, 0.2, 0.09, 0.3}, 4000},
	} {
		l := NewSegmentLog(io.Discard, "episode_return", 0)
		l.SetTarget(c.target, c.maximize)
		for i, v := range c.values {
			if _, err := l.Add(metrics.Record{Step: int64(i+1) * 1000, Values: map[string]float64{"episode_return": v}}); err != nil {
				t.Fatal(err)
			}
		}
		got, ok := l.TargetStep()
		if ok != (c.want > 0) || got != c.want {
			t.Errorf("%v to %v: TargetStep = %d, %v; want %d", c.values, c.target, got, ok, c.want)
		}
	}
	l := NewSegmentLog(io.Discard, "episode_return", 0)
	l.Add(metrics.Record{Step: 1000, Values: map[string]float64{"episode_return": 1e9}})
	if _, ok := l.TargetStep(); ok {
		t.Error("a log without a target reports a target step")
	}
}
