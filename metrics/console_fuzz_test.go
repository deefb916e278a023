package metrics

import (
	"os"
	"path/filepath"
	"testing"
)

// readText writes data to a file, whole (cut < 0) or in two pieces with a Poll after each, and reads
// it to the end with the reader c describes (its file is set here), Finish included.
func readText(t *testing.T, c ReaderConfig, data []byte, cut int) ([]Record, ReaderStats) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log")
	c.StdoutFile, c.MetricsFile = path, path
	r, err := Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close() // without it a long fuzz run exhausts file descriptors
	var recs []Record
	if cut >= 0 {
		writeFile(t, path, data[:cut])
		got, _ := r.Poll()
		recs = append(recs, got...)
		data = data[cut:]
	}
	writeFile(t, path, data)
	got, _ := r.Poll()
	recs = append(recs, got...)
	if f, ok := r.(Finisher); ok {
		recs = append(recs, f.Finish()...)
	}
	return recs, r.Stats()
}

// fuzzTextReader checks a text reader never panics and reads a file in two pieces as it reads it whole.
func fuzzTextReader(f *testing.F, c ReaderConfig, seeds ...string) {
	for _, name := range seeds {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint16(len(b)/2))
	}
	f.Add([]byte("\x1b[1m Learning iteration 1/2 \x1b[0m\n| a | 1 |\n---\nx,y\n1,2\n"), uint16(9))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		k := int(cut) % (len(data) + 1)
		ra, sa := readText(t, c, data, -1)
		rb, sb := readText(t, c, data, k)
		if !sameRecords(ra, rb) {
			t.Fatalf("whole %v, in pieces at %d %v", ra, k, rb)
		}
		if sa.Records != len(ra) || sa.Malformed != sb.Malformed {
			t.Errorf("stats whole %+v, pieces %+v, %d records", sa, sb, len(ra))
		}
		for i := 1; i < len(ra); i++ {
			if ra[i].Step < ra[i-1].Step {
				t.Fatalf("steps go backwards: %v", steps(ra))
			}
		}
	})
}

func FuzzRSLRLConsole(f *testing.F) {
	fuzzTextReader(f, ReaderConfig{Source: SourceStdout, Preset: "rsl_rl"}, "rsl_rl_v1.log", "rsl_rl_v2.log", "rsl_rl_v4.log")
}

func FuzzSB3Console(f *testing.F) {
	fuzzTextReader(f, ReaderConfig{Source: SourceStdout, Preset: "sb3"}, "sb3_stdout.log")
}

func FuzzCSVTail(f *testing.F) {
	fuzzTextReader(f, ReaderConfig{Source: SourceCSV, Preset: "sb3"}, "sb3_progress.csv")
}
