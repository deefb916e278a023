package artifacts

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/metrics"
)

const (
	mSweep = "sweep/m/ab12"
	mTrial = "0-s1"
)

func newMetricsStore(t *testing.T) *Local {
	t.Helper()
	s, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// lines renders records of the given steps, each with a value naming who wrote it.
func lines(who string, steps ...int) string {
	var b strings.Builder
	for _, s := range steps {
		b.WriteString(`{"step":` + itoa(s) + `,"` + who + `":1}` + "\n")
	}
	return b.String()
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var d []byte
	for ; n > 0; n /= 10 {
		d = append([]byte{byte('0' + n%10)}, d...)
	}
	return string(d)
}

func putRaw(t *testing.T, s Store, key, body string) {
	t.Helper()
	if err := s.Put(context.Background(), key, strings.NewReader(body)); err != nil {
		t.Fatal(err)
	}
}

// merged is the trial's stream below before, as "step/writer" strings.
func merged(t *testing.T, s Store, before int64) []string {
	t.Helper()
	var out []string
	err := ReadMetrics(context.Background(), s, mSweep, mTrial, before, metrics.LineStep, func(line []byte, step int64) error {
		who := string(line[strings.LastIndexByte(string(line), ',')+2:])
		who = who[:strings.IndexByte(who, '"')]
		out = append(out, itoa(int(step))+"/"+who)
		return nil
	})
	if err != nil {
		t.Fatalf("ReadMetrics: %v", err)
	}
	return out
}

func TestMetricsPartKey(t *testing.T) {
	got := MetricsPartKey("sweep/cartpole/ab12", "3-s2", 1, 2, 17)
	if want := "sweeps/cartpole/ab12/trials/3-s2/metrics/000001-000002-00000017.jsonl"; got != want {
		t.Errorf("MetricsPartKey = %q, want %q", got, want)
	}
	if _, err := CleanKey(got); err != nil {
		t.Error(err)
	}
	if !strings.HasPrefix(got, MetricsDir("sweep/cartpole/ab12", "3-s2")+"/") {
		t.Errorf("part %q is not under MetricsDir", got)
	}
	// Names sort in the order they are written.
	names := []string{metricsPartName(0, 1, 9), metricsPartName(0, 1, 10), metricsPartName(0, 2, 0), metricsPartName(10, 1, 0)}
	if !slices.IsSorted(names) {
		t.Errorf("part names %q do not sort in write order", names)
	}
	for _, bad := range []string{"x.jsonl", "1-2.jsonl", "1-2-3.json", "1--3.jsonl", "a-2-3.jsonl", "-1-2-3.jsonl", "1-+2-3.jsonl"} {
		if _, ok := parseMetricsPart("p/" + bad); ok {
			t.Errorf("parseMetricsPart(%q) accepted it", bad)
		}
	}
}

// No stored metrics is an empty stream, not an error.
func TestReadMetricsNone(t *testing.T) {
	if got := merged(t, newMetricsStore(t), math.MaxInt64); len(got) != 0 {
		t.Errorf("stream of a trial without metrics = %q, want none", got)
	}
}

// Parts of several segments and attempts merge into one stream in step order: a crashed attempt that
// ran past the checkpoint its retry resumed from keeps only its records below the retry's first step,
// and a segment whose trainer ran past its stop step is overridden by the next segment from that
// segment's first step on.
func TestReadMetricsMerge(t *testing.T) {
	s := newMetricsStore(t)
	part := func(seg int, att int32, seq int, body string) {
		putRaw(t, s, MetricsPartKey(mSweep, mTrial, seg, att, seq), body)
	}
	// Segment 0, attempt 1: steps 1–5 in two parts, then crashed after step 7 (checkpoint at 4).
	part(0, 1, 0, lines("s0a1", 1, 2, 3))
	part(0, 1, 1, lines("s0a1", 4, 5, 6, 7))
	// Attempt 2 resumed from the checkpoint at 4: its records win from 5 on; it ran to 12 (stop at 10,
	// iteration ended at 12).
	part(0, 2, 0, lines("s0a2", 5, 6))
	part(0, 2, 1, lines("s0a2", 7, 8, 9, 10, 11, 12))
	// Segment 1 resumed from a checkpoint at 10: its first record is 11.
	part(1, 1, 0, lines("s1a1", 11, 12, 13))
	part(1, 1, 1, lines("s1a1", 14, 15))
	// Files in the folder that are not parts are ignored, and so is a nested folder.
	putRaw(t, s, MetricsDir(mSweep, mTrial)+"/notes.txt", lines("junk", 100))
	putRaw(t, s, MetricsDir(mSweep, mTrial)+"/x/000009-000001-00000000.jsonl", lines("junk", 100))
	want := []string{"1/s0a1", "2/s0a1", "3/s0a1", "4/s0a1", "5/s0a2", "6/s0a2", "7/s0a2", "8/s0a2", "9/s0a2",
		"10/s0a2", "11/s1a1", "12/s1a1", "13/s1a1", "14/s1a1", "15/s1a1"}
	if got := merged(t, s, math.MaxInt64); !slices.Equal(got, want) {
		t.Errorf("merged stream = %q\nwant %q", got, want)
	}
	// Below a step: what the next attempt starting there keeps.
	if got := merged(t, s, 6); !slices.Equal(got, want[:5]) {
		t.Errorf("stream below 6 = %q, want %q", got, want[:5])
	}
	if got := merged(t, s, 0); len(got) != 0 {
		t.Errorf("stream below 0 = %q, want none", got)
	}
	var b strings.Builder
	if err := CopyMetrics(context.Background(), s, mSweep, mTrial, metrics.LineStep, &b); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != len(want) || !strings.HasPrefix(b.String(), `{"step":1,"s0a1":1}`+"\n") {
		t.Errorf("CopyMetrics = %d lines:\n%s", n, b.String())
	}
}

// The order comes from the numbers in the names, not from the listing's byte order: a name wider than
// its padding (attempt 1000000, seq 100000000) still sorts after narrower ones.
func TestReadMetricsOrderByNumber(t *testing.T) {
	s := newMetricsStore(t)
	dir := MetricsDir(mSweep, mTrial) + "/"
	putRaw(t, s, dir+"000000-1000000-00000000.jsonl", lines("late", 3, 4))
	putRaw(t, s, dir+"000000-999999-00000000.jsonl", lines("early", 1, 2, 3, 4, 5))
	putRaw(t, s, dir+"000000-1000000-100000000.jsonl", lines("late", 6))
	putRaw(t, s, dir+"000000-1000000-99999999.jsonl", lines("late", 5))
	want := []string{"1/early", "2/early", "3/late", "4/late", "5/late", "6/late"}
	if got := merged(t, s, math.MaxInt64); !slices.Equal(got, want) {
		t.Errorf("merged stream = %q, want %q", got, want)
	}
}

// A later attempt that starts below everything stored replaces it all; one whose parts hold no
// readable step overrides nothing; malformed and blank lines are skipped, a last line without newline
// and a line longer than any scanner buffer are kept whole.
func TestReadMetricsEdges(t *testing.T) {
	s := newMetricsStore(t)
	part := func(seg int, att int32, seq int, body string) {
		putRaw(t, s, MetricsPartKey(mSweep, mTrial, seg, att, seq), body)
	}
	part(0, 1, 0, lines("a1", 5, 6, 7))
	part(0, 2, 0, "not json\n\n"+lines("a2", 2, 3)+`{"step":4,"a2":NaN}`) // no final newline
	part(0, 3, 0, "garbage\n")
	long := `{"step":10,"` + strings.Repeat(`\u003c`, 800_000) + `":1,"a4":1}`
	part(0, 4, 0, long+"\n"+lines("a4", 11))
	var got []string
	var longKept bool
	err := ReadMetrics(context.Background(), s, mSweep, mTrial, math.MaxInt64, metrics.LineStep, func(line []byte, step int64) error {
		got = append(got, itoa(int(step)))
		if step == 10 {
			longKept = string(line) == long
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"2", "3", "4", "10", "11"}; !slices.Equal(got, want) {
		t.Errorf("steps = %q, want %q", got, want)
	}
	if !longKept {
		t.Errorf("a %d-byte line was not passed whole", len(long))
	}
}

// An attempt names its parts with its own number unless that number is stored already for its segment
// (the segment ran again and its attempts started over): then with one above the highest stored.
func TestMetricsAttempt(t *testing.T) {
	s := newMetricsStore(t)
	ctx := context.Background()
	next := func(seg int, att int32) int32 {
		t.Helper()
		n, err := MetricsAttempt(ctx, s, mSweep, mTrial, seg, att)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := next(0, 1); n != 1 {
		t.Errorf("first attempt of a fresh trial = %d, want 1", n)
	}
	putRaw(t, s, MetricsPartKey(mSweep, mTrial, 0, 1, 0), lines("a", 1))
	putRaw(t, s, MetricsPartKey(mSweep, mTrial, 0, 3, 0), lines("a", 2))
	putRaw(t, s, MetricsPartKey(mSweep, mTrial, 1, 7, 0), lines("a", 3))
	for _, tt := range []struct {
		seg  int
		att  int32
		want int32
	}{{0, 2, 2}, {0, 1, 4}, {0, 3, 4}, {0, 5, 5}, {1, 1, 1}, {1, 7, 8}, {2, 1, 1}} {
		if n := next(tt.seg, tt.att); n != tt.want {
			t.Errorf("MetricsAttempt(segment %d, attempt %d) = %d, want %d", tt.seg, tt.att, n, tt.want)
		}
	}
}

// A local store lists only the folder its prefix names: a missing folder lists nothing.
func TestLocalListUnderMissingFolder(t *testing.T) {
	s := newMetricsStore(t)
	putRaw(t, s, "sweeps/a/x.json", "{}")
	keys, err := s.List(context.Background(), "sweeps/b/trials/")
	if err != nil || len(keys) != 0 {
		t.Errorf("List of a missing folder = %q, %v; want nothing", keys, err)
	}
	keys, err = s.List(context.Background(), "sweeps/a/")
	if err != nil || !slices.Equal(keys, []string{"sweeps/a/x.json"}) {
		t.Errorf("List = %q, %v", keys, err)
	}
	keys, err = s.List(context.Background(), "sweeps/a/x")
	if err != nil || !slices.Equal(keys, []string{"sweeps/a/x.json"}) {
		t.Errorf("List of a name prefix = %q, %v", keys, err)
	}
}
