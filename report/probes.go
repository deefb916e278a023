package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rlsweep/rlsweep/trainer/probes"
)

// probeCheck formats one of a probe's checks as "V(0)=0.980 (want 1 ± 0.15)", with "none" for a
// value the trainer did not report or reported as NaN, and " FAIL" after a failing one.
func probeCheck(c probes.Check) string {
	measured := "none"
	if c.Measured != nil {
		measured = fmt.Sprintf("%.3f", *c.Measured)
	}
	s := c.Name + "=" + measured + " (want " + formatValue(c.Expected) + " ± " + formatValue(c.Tolerance) + ")"
	if !c.Passed {
		s += " FAIL"
	}
	return s
}

// probeValues formats what else a probe's result says: "fault=crashed seconds=1.2 steps=10240 ".
func probeValues(r probes.Result) string {
	var b strings.Builder
	if r.Fault != "" {
		b.WriteString("fault=" + string(r.Fault) + " ")
	}
	b.WriteString("seconds=" + probeNumber(r.Seconds) + " steps=" + strconv.FormatInt(r.Steps, 10) + " ")
	return b.String()
}

// probeNumber writes a whole number in full (10240, not 1.024e+04) and any other to 4 significant digits.
func probeNumber(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatInt(int64(x), 10)
	}
	return formatValue(x)
}
