package activities

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRingKeepsLast64InOrder(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 200} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var r ring
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
func TestRingRecordsAreValidJSON(t *testing.T) {
	for _, line := range []string{
		"{\"step\":1,\"a\x7fb\":1}\n",       // DEL: Go's %q writes \x7f
		"{\"step\":1,\"a\U000e0001b\":1}\n", // a non-printable rune outside the BMP: %q writes \U000e0001
		"{\"step\":1,\"reward\":NaN}\n",
		"{\"step\":1,\"\\\"q\\\"\":1}\n",
		"{\"step\":1,\"\xff\":1}\n",
	} {
		var r ring
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
