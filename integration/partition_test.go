//go:build integration

package integration

import (
	"bufio"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/results"
)

// partitionProxy stands between one worker and the Temporal server: cut makes it a black hole (the
// connections stay open and every byte is dropped, new ones are accepted and get nothing), as a network
// partition looks to the worker; heal closes what it holds, and the worker's new connections go through.
type partitionProxy struct {
	t        *testing.T
	ln       net.Listener
	upstream string

	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func startPartitionProxy(t *testing.T, upstream string) *partitionProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &partitionProxy{t: t, ln: ln, upstream: upstream}
	t.Cleanup(func() {
		ln.Close()
		p.heal()
	})
	go p.serve()
	return p
}

func (p *partitionProxy) addr() string { return p.ln.Addr().String() }

func (p *partitionProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		cut := p.cut
		p.mu.Unlock()
		if cut {
			go io.Copy(io.Discard, c) // held open, answered never
			continue
		}
		u, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, u)
		p.mu.Unlock()
		go p.pipe(u, c)
		go p.pipe(c, u)
	}
}

// pipe copies src to dst, dropping everything while the proxy is cut.
func (p *partitionProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if err != nil {
			dst.Close()
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			continue
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			src.Close()
			return
		}
	}
}

func (p *partitionProxy) partition() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
}

func (p *partitionProxy) heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// timelineEvent is one line the scripted trainer appends to its timeline file.
type timelineEvent struct {
	event string
	at    time.Time
	trial string
	step  int64
}

// readTimeline reads a scripted trainer's timeline (none yet: no event).
func readTimeline(t testing.TB, path string) []timelineEvent {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []timelineEvent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) != 4 {
			continue
		}
		ns, _ := strconv.ParseInt(fl[1], 10, 64)
		step, _ := strconv.ParseInt(fl[3], 10, 64)
		out = append(out, timelineEvent{event: fl[0], at: time.Unix(0, ns), trial: fl[2], step: step})
	}
	return out
}

// TestPartitionedWorkerStopsTrainerBeforeRetry: worker a's network to the Temporal server is cut (a
// black-holing proxy) while its trainer trains; worker b reaches the server. With a heartbeat timeout of
// 10 s and a grace period of 3 s, a stops its trainer once the server has gone 5 s without a heartbeat
// (10 s - 3 s - 2 s): the SIGTERM comes well before the heartbeat timeout, the trainer (which trains on
// for 10 s after SIGTERM) is killed at the end of its grace period, and the server's retry on b starts
// only after it has exited — never one trial on two hosts. The retry resumes from a's last checkpoint,
// and the trial's retrained_steps counts what a trained past it, read from a's stored metrics (its
// heartbeats never told the server of them).
func TestPartitionedWorkerStopsTrainerBeforeRetry(t *testing.T) {
	e := newEnv(t)
	px := startPartitionProxy(t, e.addr)
	pidDir, timeline := filepath.Join(e.dir, "pids"), filepath.Join(e.dir, "timeline")
	if err := os.MkdirAll(pidDir, 0o755); err != nil {
		t.Fatal(err)
	}
	e.startWorkerVia("a", px.addr(), "--slots", "1")
	// 10 records of 1,000 steps a second, a checkpoint every 10; on SIGTERM it trains on for 10 s.
	spec := e.spec("partition", `
  total_steps: 150000
  grace_period: 3s
seeds: [1]
parameters:
  sleep_ms: {value: 100}
  checkpoint_every: {value: 10}
  term_train_ms: {value: 10000}
  pid_dir: {value: `+strconv.Quote(pidDir)+`}
  timeline: {value: `+strconv.Quote(timeline)+`}
probes: {enabled: false}
retries: {max_attempts: 1}
`)
	const heartbeat, grace = 10 * time.Second, 3 * time.Second
	sweepID := e.submit(spec, "--heartbeat-timeout", heartbeat.String())
	waitFor(t, 2*time.Minute, "the trainer running on worker a", func() bool { return len(livePIDs(t, pidDir)) == 1 })
	first := livePIDs(t, pidDir)[0]
	e.startWorker("b", "--slots", "1")
	time.Sleep(3 * time.Second) // a few checkpoints and heartbeats
	cut := time.Now()
	px.partition()
	t.Logf("worker a cut off from the server")
	var exited time.Time
	waitFor(t, 40*time.Second, "worker a's trainer to exit", func() bool {
		if syscallAlive(first) {
			return false
		}
		exited = time.Now()
		return true
	})
	waitSweep(t, e.client, sweepID, 2*time.Minute)
	px.heal()
	e.close()

	var term, retry *timelineEvent
	events := readTimeline(t, timeline)
	starts := 0
	for i := range events {
		switch ev := &events[i]; ev.event {
		case "term":
			if term == nil {
				term = ev
			}
		case "start":
			if starts++; starts == 2 {
				retry = ev
			}
		}
	}
	if term == nil || retry == nil {
		t.Fatalf("timeline %+v: want a SIGTERM of the first trainer and a second start", events)
	}
	t.Logf("after the cut: SIGTERM at %.1fs, trainer exited at %.1fs, retry started at %.1fs (from step %d)",
		term.at.Sub(cut).Seconds(), exited.Sub(cut).Seconds(), retry.at.Sub(cut).Seconds(), retry.step)
	if d := term.at.Sub(cut); d > heartbeat-grace {
		t.Errorf("the partitioned worker's trainer got SIGTERM %.1fs after the cut, want well before the heartbeat timeout less the grace period (%s)",
			d.Seconds(), heartbeat-grace)
	}
	if !retry.at.After(exited) {
		t.Errorf("the retry started %.1fs after the cut, before the partitioned worker's trainer exited (%.1fs): one trial on two hosts",
			retry.at.Sub(cut).Seconds(), exited.Sub(cut).Seconds())
	}
	// How far the first attempt got: the last step of its stored metrics parts.
	parts, err := filepath.Glob(filepath.Join(e.store.URL(artifacts.MetricsDir(sweepID, "0-s1")), "000000-000001-*.jsonl"))
	if err != nil || len(parts) == 0 {
		t.Fatalf("no stored metrics of the first attempt (%v)", err)
	}
	var reached int64
	for _, p := range parts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if s, ok := metrics.LineStep([]byte(line)); ok {
				reached = max(reached, s)
			}
		}
	}
	res := e.results(sweepID)
	if len(res.Trials) != 1 {
		t.Fatalf("results.json has %d trials, want 1", len(res.Trials))
	}
	tr := res.Trials[0]
	if tr.Outcome != "completed" || tr.InfraRetries < 1 || tr.TrainerFailures != 0 {
		t.Errorf("trial: %s, infra_retries %d, trainer_failures %d; want completed, at least 1, 0", tr.Outcome, tr.InfraRetries, tr.TrainerFailures)
	}
	if want := reached - retry.step; want <= 0 || tr.RetrainedSteps != want {
		t.Errorf("retrained_steps %d, want %d: the first attempt stored records to step %d, the retry resumed from %d",
			tr.RetrainedSteps, want, reached, retry.step)
	}
}

// syscallAlive tells whether process pid still runs.
func syscallAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// TestSegmentEndingInServerOutageGoesOnPromptly: a segment whose trainer ends while the Temporal server
// is frozen for 70 s (longer than the minute the SDK retries handing in a result) hands in its result
// once the server is back, and the trial's next segment starts within seconds; without that wait the
// result was lost and the trial idled until the server timed the attempt out (the heartbeat timeout,
// 120 s here, from the outage's start).
func TestSegmentEndingInServerOutageGoesOnPromptly(t *testing.T) {
	e, srv := newKillableEnv(t)
	f := &faultInjector{t: t, e: e, srv: srv}
	pidDir, timeline := filepath.Join(e.dir, "pids"), filepath.Join(e.dir, "timeline")
	if err := os.MkdirAll(pidDir, 0o755); err != nil {
		t.Fatal(err)
	}
	e.startWorker("a", "--slots", "1")
	// Two segments of 60 records, 10 a second.
	spec := e.spec("outage-end", `
  total_steps: 120000
  segment_steps: 60000
  grace_period: 1s
seeds: [1]
parameters:
  sleep_ms: {value: 100}
  checkpoint_every: {value: 20}
  pid_dir: {value: `+strconv.Quote(pidDir)+`}
  timeline: {value: `+strconv.Quote(timeline)+`}
probes: {enabled: false}
retries: {max_attempts: 1}
`)
	sweepID := e.submit(spec, "--heartbeat-timeout", "120s")
	waitFor(t, 2*time.Minute, "the first segment's trainer running", func() bool { return len(livePIDs(t, pidDir)) == 1 })
	time.Sleep(time.Second)
	f.run([]fault{{at: 0, kind: serverFreeze, dur: 70 * time.Second}})
	back := time.Now()
	var next *timelineEvent
	waitFor(t, 3*time.Minute, "the second segment's trainer", func() bool {
		for _, ev := range readTimeline(t, timeline) {
			if ev.event == "start" && ev.step >= 60000 {
				next = &ev
				return true
			}
		}
		return false
	})
	var ended time.Time
	for _, ev := range readTimeline(t, timeline) {
		if ev.event == "exit" && ev.step == 60000 {
			ended = ev.at
		}
	}
	if ended.IsZero() || !ended.Before(back) {
		t.Fatalf("the first segment's trainer ended at %v, the server came back at %v: want it to end during the outage", ended, back)
	}
	waited := next.at.Sub(back)
	t.Logf("first segment ended %.1fs before the server came back; the next began %.1fs after", back.Sub(ended).Seconds(), waited.Seconds())
	if waited > 25*time.Second {
		t.Errorf("the trial's next segment started %.1fs after the server came back, want within seconds (the heartbeat timeout is 120s)", waited.Seconds())
	}
	waitSweepOrDump(t, e, sweepID, 2*time.Minute)
	e.close()
	if tr := completedTrials(t, e.results(sweepID), 1, 120000)[0]; tr.InfraRetries != 0 {
		t.Errorf("trial: infra_retries %d, want 0 (no attempt lost to the outage)", tr.InfraRetries)
	}
}

// TestPBTReplacementInDecisionLog: a pbt member that diverges (its NaN rewards from step 6,000) is
// replaced by a member that starts from a healthy member's checkpoint, and decisions.json logs the
// replacement (action replace, the member it replaces, its parent) besides the exploits.
func TestPBTReplacementInDecisionLog(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "4")
	spec := e.spec("pbtreplace", `
  total_steps: 16000
method: pbt
sampler_seed: 4
seeds: [1]
parameters:
  lr: {min: 1.0e-4, max: 1.0e-2, distribution: log_uniform}
  nan_at: {values: [6000, 1000000000]}
  sleep_ms: {value: 100}
  checkpoint_every: {value: 1}
pbt: {population: 4, ready_steps: 4000, mutable: [lr]}
probes: {enabled: false}
concurrency: 4
`)
	sweepID := e.submit(spec)
	waitSweep(t, e.client, sweepID, 3*time.Minute)
	res := e.results(sweepID)
	diverged, replacements := map[string]bool{}, map[string]string{} // replacement -> its parent
	for _, tr := range res.Trials {
		if tr.Outcome == "diverged" {
			diverged[tr.TrialID] = true
		}
		if tr.Parent != "" && tr.Config >= 4 {
			replacements[tr.TrialID] = tr.Parent
		}
	}
	if len(diverged) == 0 || len(replacements) == 0 {
		t.Fatalf("no member diverged and was replaced (diverged %v, replacements %v): sampler_seed 4 gives member 0-s1 nan_at 6000", diverged, replacements)
	}
	var decisions []results.Decision
	e.readJSON(artifacts.DecisionsKey(sweepID), &decisions)
	logged := map[string]results.Decision{}
	for _, d := range decisions {
		if d.Action == "replace" {
			if _, dup := logged[d.TrialID]; dup {
				t.Errorf("replacement %s logged twice", d.TrialID)
			}
			logged[d.TrialID] = d
		}
	}
	for id, parent := range replacements {
		d, ok := logged[id]
		if !ok {
			t.Errorf("replacement %s (parent %s) missing from decisions.json: %+v", id, parent, decisions)
			continue
		}
		if d.Parent != parent || !diverged[d.Replaces] || d.ResumeFrom == "" || len(d.Params) == 0 {
			t.Errorf("decision %+v, want member %s replacing a diverged member from %s's checkpoint", d, id, parent)
		}
	}
	if len(logged) != len(replacements) {
		t.Errorf("decisions.json logs %d replacements, results.json has %d", len(logged), len(replacements))
	}
}
