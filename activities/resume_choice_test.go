package activities

import (
	"testing"

	"github.com/rlsweep/rlsweep/sweepstore"
)

func TestResumeChoice(t *testing.T) {
	handed := SegmentInput{Segment: 2, ResumeFrom: "ck/seg1", ResumeStep: 480, StartStep: 500}
	for _, c := range []struct {
		name   string
		in     SegmentInput
		prev   Heartbeat
		stored *sweepstore.ResumePoint
		want   resumeFrom
	}{
		{name: "the trial's start", in: SegmentInput{Segment: 0}},
		{name: "the handed checkpoint at the later of resume and start step", in: handed, want: resumeFrom{key: "ck/seg1", step: 500}},
		{name: "the handed checkpoint at its resume step", in: SegmentInput{ResumeFrom: "ck/a", ResumeStep: 520, StartStep: 500}, want: resumeFrom{key: "ck/a", step: 520}},
		{name: "the heartbeat's checkpoint over the handed one", in: handed, prev: Heartbeat{CheckpointKey: "ck/hb", CheckpointStep: 700},
			want: resumeFrom{key: "ck/hb", step: 700}},
		{name: "a heartbeat without a checkpoint keeps the handed one", in: handed, prev: Heartbeat{Step: 900, CheckpointStep: 800},
			want: resumeFrom{key: "ck/seg1", step: 500}},
		{name: "the heartbeat names the handed checkpoint", in: handed, prev: Heartbeat{CheckpointKey: "ck/seg1", CheckpointStep: 999},
			want: resumeFrom{key: "ck/seg1", step: 500}},
		{name: "the stored point past the heartbeat's", in: handed, prev: Heartbeat{CheckpointKey: "ck/hb", CheckpointStep: 700},
			stored: &sweepstore.ResumePoint{Segment: 2, Step: 750, Key: "ck/st"}, want: resumeFrom{key: "ck/st", step: 750, stored: true}},
		{name: "the stored point at the heartbeat's step", in: handed, prev: Heartbeat{CheckpointKey: "ck/hb", CheckpointStep: 700},
			stored: &sweepstore.ResumePoint{Segment: 2, Step: 700, Key: "ck/st"}, want: resumeFrom{key: "ck/hb", step: 700}},
		{name: "the stored point of another segment", in: handed,
			stored: &sweepstore.ResumePoint{Segment: 1, Step: 1000, Key: "ck/old"}, want: resumeFrom{key: "ck/seg1", step: 500}},
		{name: "the stored point without a heartbeat checkpoint", in: handed,
			stored: &sweepstore.ResumePoint{Segment: 2, Step: 600, Key: "ck/st"}, want: resumeFrom{key: "ck/st", step: 600, stored: true}},
		{name: "the stored point on a fresh trial", in: SegmentInput{Segment: 0},
			stored: &sweepstore.ResumePoint{Segment: 0, Step: 40, Key: "ck/st"}, want: resumeFrom{key: "ck/st", step: 40, stored: true}},
		{name: "the stored point is the handed checkpoint", in: handed,
			stored: &sweepstore.ResumePoint{Segment: 2, Step: 600, Key: "ck/seg1"}, want: resumeFrom{key: "ck/seg1", step: 500, stored: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := newResumeChoice(c.in, c.prev)
			ch.stored = c.stored
			if got := ch.choose(); got != c.want {
				t.Errorf("choose() = %+v, want %+v", got, c.want)
			}
		})
	}
}
