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

	long longTrack
	// firstSum and firstN sum the first longWindow/2 values, the start everImproved compares with.
	firstSum float64
	firstN   int
	// repeated says the last value equals the one before it exactly: a logger that reports the mean of its
	// last 100 episodes repeats it while no episode ends (a stale buffer), which says nothing new.
	repeated bool
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
	if p.firstN < longWindow/2 {
		p.firstSum += v
		p.firstN++
	}
	p.repeated = p.n > 0 && v == p.prev
	if p.n > 0 {
		p.absDiffSum += math.Abs(v - p.prev)
		p.absDiffN++
	}
	p.prev = v
	p.last[p.n%progressWindow] = v
	p.lens[p.n%progressWindow] = length
	p.n++
	p.long.add(v, p.start(), p.noise(), p.frac)
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

// creeping reports whether the objective is improving without having passed the improvement bar yet:
// no five-record window passed it, but the run improved by everImproved's test (its last values above
// its first by more than chance). A return that climbs steadily from −7,990 to −7,650 in a fifth of the
// run (an SB3 Acrobot that ends at −6,270) has not passed a bar of 10 % of |start| and is learning.
func (p *progress) creeping() bool {
	return !p.improved(1) && p.everImproved()
}

// doingWellShare is the share of its best gain a run must still hold to count as doing well.
const doingWellShare = 0.75

// goal converts an objective's value to the goal's direction (higher is better).
func (p *progress) goal(v float64) float64 {
	if p.minimize {
		return -v
	}
	return v
}

// raw converts a goal-direction level back to the objective's own sign.
func (p *progress) raw(v float64) float64 {
	if p.minimize {
		return -v
	}
	return v
}

// longWindow is how many records of the objective each mean of the long track averages: a per-episode
// return (SB3's monitor.csv) moves by half its range from one episode to the next, and five of them say
// little; fifty average that noise down by a factor of seven.
const longWindow = 50

// longTrack follows the objective's means over w records (longWindow for progress.long), for the rules that measure a loss of gain (policy_collapse's loss of the gain,
// partial_collapse): on a noisy curve the five-record windows of progress swing by more than the gain, on
// a smooth one the long track only lags. It keeps the last 2 × w values, so it can tell whether the last
// window is below the one before it.
type longTrack struct {
	w                int
	vals             []float64 // a ring of 2 × w values
	n                int
	sumLast, sumPrev float64 // sums of the last w values and of the w before them
	start            float64 // the mean of the first w values
	best             float64 // the best mean so far
	// heldFor counts the records whose mean stood above the improvement bar (longTrack.bar).
	heldFor int
}

// add takes the objective's next value (already in the goal's direction), with the run's start and noise
// for the improvement bar.
func (l *longTrack) add(v, start, noise, frac float64) {
	if l.vals == nil {
		l.vals = make([]float64, 2*l.w)
	}
	i := l.n % (2 * l.w)
	if l.n >= l.w {
		// The value leaving the last window enters the one before it.
		out := l.vals[(l.n-l.w)%(2*l.w)]
		l.sumLast -= out
		l.sumPrev += out
		if l.n >= 2*l.w {
			l.sumPrev -= l.vals[i]
		}
	}
	l.vals[i] = v
	l.sumLast += v
	l.n++
	if l.n%(2*l.w) == 0 {
		// Sums kept by adding and taking away drift on values that span orders of magnitude: recount them.
		l.sumLast, l.sumPrev = 0, 0
		for j := range l.w {
			l.sumPrev += l.vals[j]
			l.sumLast += l.vals[l.w+j]
		}
	}
	if l.n < l.w {
		return
	}
	m := l.recent()
	if l.n == l.w {
		l.start, l.best = m, m
	}
	l.best = max(l.best, m)
	if m > l.bar(start, noise, frac) {
		l.heldFor++
	}
}

// ready reports whether a full window exists.
func (l *longTrack) ready() bool { return l.n >= l.w }

// recent is the mean of the last w values; previous that of the w before them (valid once n ≥ 2 × w).
func (l *longTrack) recent() float64   { return l.sumLast / float64(l.w) }
func (l *longTrack) previous() float64 { return l.sumPrev / float64(l.w) }

// margin is how far a mean of w values moves by chance: three standard errors, taking the
// record-to-record noise for the values' spread.
func (l *longTrack) margin(noise float64) float64 { return 3 * noise / math.Sqrt(float64(l.w)) }

// bar is the level a long mean must exceed to count as improved: the run's start plus frac of its
// magnitude, and at least plus three standard errors of the difference between a long mean and the
// start (the mean of progressWindow values, itself noisy: a start that came out low by chance must not
// make a flat run's long means count as improved).
func (l *longTrack) bar(start, noise, frac float64) float64 {
	return start + max(frac*math.Abs(start), 3*noise*math.Sqrt(1.0/progressWindow+1.0/float64(l.w)))
}

// rising reports whether the last mean is above the one before it by more than chance: a run climbing
// back from a fall.
func (l *longTrack) rising(noise float64) bool {
	return l.n >= 2*l.w && l.recent() > l.previous()+math.Sqrt2*l.margin(noise)
}

// floor is the starting level a track measures gains from: the lower of the run's start (its first
// five values) and the track's first mean. The lower start makes the gain larger and a loss of it harder
// to reach.
func (p *progress) floor(l *longTrack) float64 { return min(p.start(), l.start) }

// trackGain is how far a track's best mean rose above its floor.
func (p *progress) trackGain(l *longTrack) float64 { return l.best - p.floor(l) }

// trackLost reports whether a track held an improvement (for sustainedImprovement records) and its mean
// has since lost at least share of its gain, by more than sigmas standard errors of its mean (its margin
// is three), without falling below the floor: a loss of the gain is measured where the start is the
// floor; a fall below the start is policy_collapse's original case, judged with the run's own noise (a
// CleanRL DQN on CartPole whose per-episode return dips from 50 to 12, below its start of 18, for 400
// episodes before it learns to 200 is not stopped by it).
func (p *progress) trackLost(l *longTrack, share, sigmas float64) bool {
	if !l.ready() || l.heldFor < sustainedImprovement || l.recent() < p.floor(l) {
		return false
	}
	return l.recent() < p.floor(l)+(1-share)*p.trackGain(l)-sigmas/3*l.margin(p.noise())
}

// everImproved reports whether the objective ever rose above its start by more than chance: a
// five-record window above the improvement bar, a long mean above its bar, or the mean of its last h
// values above the mean of its first k by two standard errors of their difference (h: half the values so
// far, at most longWindow; k: half of h, at least progressWindow). The last test sees a climb out of a
// noisy start, whose spread puts the bars out of reach (an ML-Agents car from −317 to −20 in steps of
// ±60); the first k values are the start before most of any climb. Two standard errors, not three: the
// rules that ask whether a run never improved stop it when it did not, so a doubt counts as an
// improvement.
func (p *progress) everImproved() bool {
	if p.improved(1) || p.long.heldFor > 0 {
		return true
	}
	h := min(p.n/2, longWindow)
	if h < progressWindow {
		return false
	}
	k := max(progressWindow, h/2)
	var first float64
	if p.n <= 2*longWindow {
		for _, v := range p.long.vals[:k] {
			first += v
		}
		first /= float64(k)
	} else {
		first = p.firstSum / float64(p.firstN)
	}
	var last float64
	for i := p.n - h; i < p.n; i++ {
		last += p.long.vals[i%(2*longWindow)]
	}
	last /= float64(h)
	return last > first+2*p.noise()*math.Sqrt(1/float64(k)+1/float64(h))
}

// doingWellAny reports whether the run is doing well by its five-record windows or by its long track
// (improved, and the long mean holds doingWellShare of the long gain): the rules that judge a loss of
// gain stop neither.
func (p *progress) doingWellAny() bool {
	if p.doingWell() {
		return true
	}
	l := &p.long
	return l.ready() && l.heldFor > 0 && l.recent() >= p.floor(l)+doingWellShare*p.trackGain(l)
}
