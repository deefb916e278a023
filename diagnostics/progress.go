package diagnostics

import "math"

// progressWindow is how many records of the objective make up its starting level and each windowed
// mean: one record of a noisy RL curve says little, five say where the run stands.
const progressWindow = 5

// progress follows a run's objective in its goal's direction (higher is better; a minimised objective
// is negated on the way in): its starting level, the mean of its last progressWindow values, and the best
// such windowed mean so far. Rules judge a run against its own beginning and its own best with it: a run
// whose windowed objective is near its best is doing well, whatever else its metrics say.
type progress struct {
	minimize bool

	startSum, startMin, startMax float64
	startN                       int

	last [progressWindow]float64 // ring of the last values
	lens [progressWindow]float64 // the episode length beside each of them; NaN where not reported
	n    int                     // values seen

	lenAtBest float64 // the windowed episode length when best was set; NaN when unknown

	prev       float64 // the previous value
	absDiffSum float64 // sum of |value − previous value|: the run's record-to-record noise
	absDiffN   int

	best     float64 // best windowed mean so far
	haveBest bool
	// heldFor counts the records whose windowed mean stood above improvementBar: an improvement held
	// for a while, not one lucky window.
	heldFor int
	// frac is the fraction of |start| an improvement must reach to count (policy_collapse's threshold).
	frac float64
}

// add takes the objective's next value and the episode length reported beside it (NaN when none);
// a NaN or ±Inf objective is not a level and is skipped.
func (p *progress) add(v, length float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if p.minimize {
		v = -v
	}
	if p.startN < progressWindow {
		if p.startN == 0 || v < p.startMin {
			p.startMin = v
		}
		if p.startN == 0 || v > p.startMax {
			p.startMax = v
		}
		p.startSum += v
		p.startN++
	}
	if p.n > 0 {
		p.absDiffSum += math.Abs(v - p.prev)
		p.absDiffN++
	}
	p.prev = v
	p.last[p.n%progressWindow] = v
	p.lens[p.n%progressWindow] = length
	p.n++
	if !p.ready() {
		return
	}
	m := p.recent()
	if !p.haveBest || m > p.best {
		p.best, p.haveBest = m, true
		p.lenAtBest = p.recentLength()
	}
	if m > p.improvementBar() {
		p.heldFor++
	}
}

// ready reports whether the starting level and a windowed mean exist.
func (p *progress) ready() bool { return p.startN == progressWindow && p.n >= progressWindow }

// start is the mean of the first progressWindow values; spread their range, the run's own early noise.
func (p *progress) start() float64  { return p.startSum / progressWindow }
func (p *progress) spread() float64 { return p.startMax - p.startMin }

// recent is the mean of the last progressWindow values.
func (p *progress) recent() float64 {
	var s float64
	for _, v := range p.last {
		s += v
	}
	return s / progressWindow
}

// recentLength is the mean episode length over the last progressWindow values; NaN unless every one
// of them came with a finite, positive length.
func (p *progress) recentLength() float64 {
	var s float64
	for _, l := range p.lens {
		if !(l > 0) || math.IsInf(l, 0) {
			return math.NaN()
		}
		s += l
	}
	return s / progressWindow
}

// lengthened reports whether the episodes became much longer since the best window (1.5× or more) and
// the return per step improved: a maximised episodic return that falls because episodes last longer.
// Legged-robot rewards sum per-step penalties over an episode that ends when the robot falls, so a
// policy that learns to stay up collects more penalty per episode, and its return dips below its first
// values while it learns. Where the return is −1 a step (MountainCar), the return per step does not
// improve, and a fall still counts.
func (p *progress) lengthened() bool {
	if p.minimize || !p.haveBest {
		return false
	}
	now, then := p.recentLength(), p.lenAtBest
	if math.IsNaN(now) || math.IsNaN(then) || now < 1.5*then {
		return false
	}
	return p.recent()/now > p.best/then
}

// recentSpread is the range of the last progressWindow values.
func (p *progress) recentSpread() float64 {
	lo, hi := p.last[0], p.last[0]
	for _, v := range p.last[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	return hi - lo
}

// gain is how far the best windowed mean rose above the start (≥ 0 once ready).
func (p *progress) gain() float64 { return p.best - p.start() }

// noise is the objective's mean record-to-record change so far, how much one record moves by chance
// (and by learning: an estimate that errs on the high side).
func (p *progress) noise() float64 {
	if p.absDiffN == 0 {
		return 0
	}
	return p.absDiffSum / float64(p.absDiffN)
}

// improvementBar is the level a windowed mean must exceed to count as improved: the start plus frac of
// its magnitude, and at least plus its early spread and three times its record-to-record noise (a run
// whose reward wanders around 0.001 has not improved when a window reaches 0.003).
func (p *progress) improvementBar() float64 {
	return p.start() + max(p.frac*math.Abs(p.start()), p.spread(), 3*p.noise())
}

// improved reports whether the run's windowed objective has stood above improvementBar for at least
// minRecords records.
func (p *progress) improved(minRecords int) bool { return p.ready() && p.heldFor >= minRecords }

// doingWell reports whether the run improved and its windowed objective still holds at least
// doingWellShare of its best gain: such a run is not diverging, whatever its other metrics say.
func (p *progress) doingWell() bool {
	return p.improved(1) && p.recent() >= p.start()+doingWellShare*p.gain()
}

// fallen reports whether the windowed objective lost more than three quarters of its best gain and is
// below that by more than the run's noise (its early spread, its record-to-record change); a run that
// never improved has fallen once it is below its start by more than that noise. A noisy plateau's
// windows swing by half the gain and more: that is no fall.
func (p *progress) fallen() bool {
	return p.ready() && p.recent() < p.start()+0.25*p.gain()-max(p.spread(), p.noise())
}

// holdsGain reports whether the run improved and keeps at least half of its best gain.
func (p *progress) holdsGain() bool {
	return p.improved(1) && p.recent() >= p.start()+0.5*p.gain()
}

// barelyVaries reports whether the recent objective is nearly constant (a solved CartPole's 500 every
// episode): returns that do not vary leave nothing for a value function to explain.
func (p *progress) barelyVaries() bool {
	return p.ready() && p.recentSpread() <= 0.01*math.Abs(p.recent())+1e-9
}

// doingWellShare is the share of its best gain a run must still hold to count as doing well.
const doingWellShare = 0.75

// raw converts a goal-direction level back to the objective's own sign.
func (p *progress) raw(v float64) float64 {
	if p.minimize {
		return -v
	}
	return v
}
