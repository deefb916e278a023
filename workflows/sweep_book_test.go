package workflows

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/scheduler"
)

// bookStep is one transition of a trialBook and what it must give. do names the method: launch,
// land (startLanded), fail (startFailed), release, end, ask (the scheduler answering decide at
// segment seg; decide "" means the scheduler must not be asked), retake, stop (a stop between
// boundaries), passes, answerable (heldAnswerable), carry (a continue-as-new: the next run's book made
// from what this one carries). want is the result as bookResult writes it; book, when set, the
// book's state after the step as bookState writes it.
type bookStep struct {
	do     string
	id     string
	seg    int
	decide scheduler.Action
	want   string
	book   string
}

func bookState(b *trialBook) string {
	return fmt.Sprintf("running %v; started %v; in flight %d; held %v; release on start %v; decided %v",
		b.runningIDs(), sortedKeys(b.started), b.startsInFlight(), sortedKeys(b.held), sortedKeys(b.releaseOnStart),
		sortedKeys(b.decided))
}

// apply runs one step on b and returns the book to go on with (a new one after carry) and the result.
func (st bookStep) apply(t *testing.T, b *trialBook) (*trialBook, string) {
	switch st.do {
	case "launch":
		b.launched(st.id)
		return b, ""
	case "land":
		return b, fmt.Sprint(b.startLanded(st.id))
	case "fail":
		b.startFailed(st.id)
		return b, ""
	case "release":
		return b, fmt.Sprint(b.release(st.id))
	case "end":
		return b, fmt.Sprint(b.end(st.id))
	case "ask":
		decide := func(q scheduler.Boundary) scheduler.Decision {
			if st.decide == "" {
				t.Errorf("%s %s@%d: the scheduler was asked, want the question answered without it", st.do, st.id, st.seg)
			}
			return scheduler.Decision{Segment: q.Segment, Action: st.decide}
		}
		d, fresh, ok := b.ask(scheduler.Boundary{TrialID: st.id, Segment: st.seg}, decide)
		switch {
		case !ok && b.held[st.id].TrialID == st.id:
			return b, "held"
		case !ok:
			return b, "dropped"
		case fresh:
			return b, fmt.Sprintf("%s@%d fresh", d.Action, d.Segment)
		}
		return b, fmt.Sprintf("%s@%d", d.Action, d.Segment)
	case "retake":
		var ids []string
		for _, q := range b.retake() {
			ids = append(ids, fmt.Sprintf("%s@%d", q.TrialID, q.Segment))
		}
		return b, fmt.Sprint(ids)
	case "stop":
		known, tell := b.stop(st.id, scheduler.Decision{Segment: -1, Action: scheduler.Stop})
		return b, fmt.Sprintf("known %v, tell %v", known, tell)
	case "passes":
		return b, fmt.Sprint(b.passes(st.id))
	case "answerable":
		return b, fmt.Sprint(b.heldAnswerable())
	case "carried":
		return b, fmt.Sprint(b.carriedOver(st.id))
	case "carry":
		running, decided := b.carry()
		return newTrialBook(running, decided), fmt.Sprint(running)
	}
	t.Fatalf("unknown step %q", st.do)
	return b, ""
}

// The trial book on its own, no workflow: each case a run of transitions from a book carrying over
// the trials carried, with each result and, where given, the book's state after it.
func TestTrialBook(t *testing.T) {
	for _, c := range []struct {
		name    string
		carried []string
		steps   []bookStep
	}{
		{"a start lands, the trial ends once", nil, []bookStep{
			{do: "launch", id: "a", book: "running [a]; started []; in flight 1; held []; release on start []; decided []"},
			{do: "carried", id: "a", want: "false"},
			{do: "land", id: "a", want: "false", book: "running [a]; started [a]; in flight 0; held []; release on start []; decided []"},
			{do: "end", id: "a", want: "true", book: "running []; started [a]; in flight 0; held []; release on start []; decided []"},
			{do: "end", id: "a", want: "false"}, // its end learnt a second time
		}},
		{"a start that fails", nil, []bookStep{
			{do: "launch", id: "a"},
			{do: "release", id: "a", want: "false"},
			{do: "fail", id: "a", book: "running [a]; started []; in flight 0; held []; release on start []; decided []"},
			{do: "end", id: "a", want: "true", book: "running []; started []; in flight 0; held []; release on start []; decided []"},
		}},
		{"release on start of standby trials", nil, []bookStep{
			{do: "launch", id: "s2"},
			{do: "launch", id: "s1"},
			{do: "release", id: "s2", want: "false", book: "running [s1 s2]; started []; in flight 2; held []; release on start [s2]; decided []"},
			{do: "land", id: "s1", want: "false"}, // not released: it stays standby
			{do: "land", id: "s2", want: "true", book: "running [s1 s2]; started [s1 s2]; in flight 0; held []; release on start []; decided []"},
			{do: "release", id: "s1", want: "true"}, // landed: released at once
			{do: "land", id: "s3", want: "false"},
		}},
		{"carried trials have landed and are not followed", []string{"b", "a"}, []bookStep{
			{do: "carried", id: "a", want: "true"},
			{do: "release", id: "b", want: "true", book: "running [a b]; started [a b]; in flight 0; held []; release on start []; decided []"},
			{do: "end", id: "a", want: "true"},
			{do: "carried", id: "a", want: "false"},
		}},
		{"a boundary asked, then asked again", []string{"a"}, []bookStep{
			{do: "ask", id: "a", seg: 0, decide: scheduler.Continue, want: "continue@0 fresh"},
			{do: "ask", id: "a", seg: 0, want: "continue@0"}, // the same question: the same answer, made once
			{do: "ask", id: "a", seg: 1, decide: scheduler.Stop, want: "stop@1 fresh"},
			{do: "passes", id: "a", want: "false"},
			{do: "ask", id: "x", seg: 0, want: "dropped"}, // not running
		}},
		{"held at a boundary, answered after an end", []string{"a", "b", "c"}, []bookStep{
			{do: "ask", id: "c", seg: 0, decide: scheduler.Wait, want: "held"},
			{do: "ask", id: "b", seg: 0, decide: scheduler.Wait, want: "held"},
			{do: "answerable", want: "false"}, // nothing ended since
			{do: "end", id: "a", want: "true"},
			{do: "answerable", want: "true"},
			{do: "retake", want: "[b@0 c@0]"}, // in ID order
			{do: "answerable", want: "false"},
			{do: "ask", id: "b", seg: 0, decide: scheduler.Continue, want: "continue@0 fresh",
				book: "running [b c]; started [a b c]; in flight 0; held [c]; release on start []; decided [b]"},
		}},
		{"a trial ending while held", []string{"a", "b"}, []bookStep{
			{do: "ask", id: "a", seg: 2, decide: scheduler.Wait, want: "held"},
			{do: "end", id: "a", want: "true", book: "running [b]; started [a b]; in flight 0; held []; release on start []; decided []"},
			{do: "answerable", want: "false"},
			{do: "retake", want: "[]"},
		}},
		{"stopped between boundaries", []string{"a", "b"}, []bookStep{
			{do: "passes", id: "a", want: "true"},
			{do: "stop", id: "a", want: "known true, tell true"},
			{do: "passes", id: "a", want: "false"},
			{do: "ask", id: "a", seg: 3, want: "stop@3"}, // the stop is its answer
			{do: "ask", id: "b", seg: 1, decide: scheduler.Wait, want: "held"},
			{do: "stop", id: "b", want: "known true, tell false"}, // answered when asked again
			{do: "retake", want: "[b@1]"},
			{do: "ask", id: "b", seg: 1, want: "stop@1"},
			{do: "stop", id: "x", want: "known false, tell false"},
			{do: "passes", id: "x", want: "false"},
		}},
		{"a continue-as-new carries it over", nil, []bookStep{
			{do: "launch", id: "b"},
			{do: "launch", id: "a"},
			{do: "land", id: "a"},
			{do: "land", id: "b"},
			{do: "launch", id: "c"},
			{do: "land", id: "c"},
			{do: "ask", id: "a", seg: 1, decide: scheduler.Stop, want: "stop@1 fresh"},
			{do: "ask", id: "b", seg: 1, decide: scheduler.Wait, want: "held"},
			{do: "end", id: "c", want: "true"},
			{do: "carry", want: "[a b]", book: "running [a b]; started [a b]; in flight 0; held []; release on start []; decided [a]"},
			{do: "carried", id: "a", want: "true"},
			{do: "ask", id: "a", seg: 1, want: "stop@1"}, // asked again in the next run: not decided twice
			{do: "ask", id: "b", seg: 1, decide: scheduler.Continue, want: "continue@1 fresh"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newTrialBook(c.carried, nil)
			for i, st := range c.steps {
				var got string
				b, got = st.apply(t, b)
				if st.want != "" && got != st.want {
					t.Errorf("step %d, %s %s: got %s, want %s", i, st.do, st.id, got, st.want)
				}
				if st.book != "" {
					if got := bookState(b); got != st.book {
						t.Errorf("step %d, %s %s: book\n  %s\nwant\n  %s", i, st.do, st.id, got, st.book)
					}
				}
			}
		})
	}
}

// What a continue-as-new carries is the book's own copy: the next run's changes do not reach it, and
// nothing is carried for a book with no decisions.
func TestTrialBookCarryIsACopy(t *testing.T) {
	b := newTrialBook([]string{"a"}, map[string]scheduler.Decision{"a": {Segment: 1, Action: scheduler.Continue}})
	running, decided := b.carry()
	next := newTrialBook(running, decided)
	next.end("a")
	if _, ok := b.decided["a"]; !ok || len(decided) != 1 {
		t.Errorf("the next run's end reached the carried decisions: %v, %v", b.decided, decided)
	}
	if _, decided := next.carry(); decided != nil {
		t.Errorf("carried decisions of an empty book = %v, want nil", decided)
	}
	if s := bookState(next); !strings.HasPrefix(s, "running []") {
		t.Errorf("next book %s, want nothing running", s)
	}
}
