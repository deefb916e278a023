package metrics

import (
	"path/filepath"
	"testing"
)

// rslrlEvents writes what rsl_rl's runner logs for iterations 0..n-1, each about 0.3 s long: losses,
// std and fps every iteration; Train/mean_reward and Train/mean_episode_length only from iteration 3
// (no episode had ended before), each followed by its /time copy keyed by the whole seconds elapsed.
func rslrlEvents(n int) []byte {
	b := fileVersionRecord()
	for it := int64(0); it < int64(n); it++ {
		b = append(b, tfrecord(eventBytes(it, simpleValue("Loss/value_function", 0.5)))...)
		b = append(b, tfrecord(eventBytes(it, simpleValue("Loss/surrogate", -0.01)))...)
		b = append(b, tfrecord(eventBytes(it, simpleValue("Policy/mean_noise_std", 1)))...)
		b = append(b, tfrecord(eventBytes(it, simpleValue("Perf/total_fps", 50000)))...)
		if it >= 3 {
			secs := (it + 1) * 3 / 10
			b = append(b, tfrecord(eventBytes(it, simpleValue("Train/mean_reward", float32(it))))...)
			b = append(b, tfrecord(eventBytes(it, simpleValue("Train/mean_episode_length", 20)))...)
			b = append(b, tfrecord(eventBytes(secs, simpleValue("Train/mean_reward/time", float32(it))))...)
			b = append(b, tfrecord(eventBytes(secs, simpleValue("Train/mean_episode_length/time", 20)))...)
		}
	}
	return b
}

// rsl_rl's /time tags repeat Train/mean_reward and Train/mean_episode_length with wall-clock seconds as
// the step: they are ignored, so 40 iterations read as 40 records in step order, not as records on
// two interleaved axes; the reward, logged only once episodes end, does not break the grouping.
func TestTensorBoardRSLRLTimeTagsIgnored(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "events.out.tfevents.1"), rslrlEvents(40))
	r, err := Open(ReaderConfig{Source: SourceTensorBoard, Preset: "rsl_rl", TBDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs := readAll(t, r)
	if len(recs) != 40 {
		t.Fatalf("got %d records, want 40 (one per iteration): steps %v", len(recs), steps(recs))
	}
	for i, rec := range recs {
		if rec.Step != int64(i) {
			t.Fatalf("record %d has step %d, want %d: steps %v", i, rec.Step, i, steps(recs))
		}
		_, hasReward := rec.Values[Reward]
		if hasReward != (i >= 3) || len(rec.Values) != map[bool]int{false: 4, true: 6}[i >= 3] {
			t.Errorf("iteration %d: values %v", i, rec.Values)
		}
		for k := range rec.Values {
			if k == "Train/mean_reward/time" || k == "Train/mean_episode_length/time" {
				t.Errorf("iteration %d holds the wall-clock tag %s", i, k)
			}
		}
	}
	if st := r.Stats(); st.Steps != StepsIterations {
		t.Errorf("Stats.Steps = %q, want %q", st.Steps, StepsIterations)
	}
}

// With steps_per_iteration, iteration i becomes (i+1) × N environment steps; a tag named like a time
// copy whose base tag was never seen is an ordinary tag.
func TestTensorBoardStepsPerIteration(t *testing.T) {
	dir := t.TempDir()
	b := append(rslrlEvents(3), tfrecord(eventBytes(3, simpleValue("Perf/time", 7)))...)
	writeFile(t, filepath.Join(dir, "events.out.tfevents.1"), b)
	r, err := Open(ReaderConfig{Source: SourceTensorBoard, Preset: "rsl_rl", TBDir: dir, StepsPerIteration: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs := readAll(t, r)
	if got := steps(recs); !equalSteps(got, []int64{4096, 8192, 12288, 16384}) {
		t.Fatalf("steps = %v, want (i+1) × 4096", got)
	}
	if recs[3].Values["Perf/time"] != 7 {
		t.Errorf("Perf/time = %v, want 7: no Perf tag precedes it", recs[3].Values)
	}
	if st := r.Stats(); st.Steps != StepsEnv+" (iteration × 4096)" {
		t.Errorf("Stats.Steps = %q", st.Steps)
	}
}

// rl_games writes each reward three times: rewards/step keyed by frames, rewards/iter by epochs and
// rewards/time by seconds. Only the frame axis makes records; the copies never interleave with it.
func TestTensorBoardRLGamesOtherAxesIgnored(t *testing.T) {
	dir := t.TempDir()
	var b []byte
	for epoch := int64(1); epoch <= 30; epoch++ {
		frame := epoch * 16384
		b = append(b, tfrecord(eventBytes(frame, simpleValue("losses/c_loss", 0.5)))...)
		b = append(b, tfrecord(eventBytes(frame, simpleValue("rewards/step", float32(epoch))))...)
		b = append(b, tfrecord(eventBytes(epoch, simpleValue("rewards/iter", float32(epoch))))...)
		b = append(b, tfrecord(eventBytes(3*epoch, simpleValue("rewards/time", float32(epoch))))...)
	}
	writeFile(t, filepath.Join(dir, "events.out.tfevents.1"), b)
	r, err := Open(ReaderConfig{Source: SourceTensorBoard, Preset: "rl_games", TBDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs := readAll(t, r)
	if len(recs) != 30 {
		t.Fatalf("got %d records, want 30 (one per epoch, on the frame axis): steps %v", len(recs), steps(recs))
	}
	for i, rec := range recs {
		if rec.Step != int64(i+1)*16384 || rec.Values[Reward] != float64(i+1) {
			t.Errorf("record %d: step %d, values %v; want step %d, reward %d", i, rec.Step, rec.Values, (i+1)*16384, i+1)
		}
	}
}

// A run's preset is told from its tags: the preset with the most of them, two at least.
func TestDetectPreset(t *testing.T) {
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"Train/mean_reward", "Loss/value_function", "Train/mean_reward/time"}, "rsl_rl"},
		{[]string{"rollout/ep_rew_mean", "train/value_loss"}, "sb3"},
		{[]string{"rewards/step", "losses/c_loss", "losses/entropy"}, "rl_games"},
		{[]string{"Environment/Cumulative Reward", "Losses/Value Loss"}, "mlagents"},
		{[]string{"charts/episodic_return", "losses/value_loss"}, "cleanrl"},
		// skrl without finished episodes: no reward tag, its losses and std tell it.
		{[]string{"Loss / Value loss", "Loss / Policy loss", "Policy / Standard deviation", "Reward / Instantaneous reward (mean)"}, "skrl"},
		{[]string{"Train/mean_reward"}, ""}, // one tag is no evidence
		{[]string{"my/return", "loss"}, ""},
		{[]string{"losses/entropy", "charts/SPS", "rewards/step"}, ""}, // cleanrl 2, rl_games 2: no guess
		// Tags a framework writes that its preset does not map still tell it.
		{[]string{"rewards/iter", "losses/entropy", "info/kl"}, "rl_games"},
		{[]string{"rewards/step", "rewards/iter", "rewards/time", "losses/entropy", "charts/SPS"}, "rl_games"},
		{[]string{"Loss / Entropy loss", "Reward / Instantaneous reward (mean)"}, "skrl"},
		{[]string{"train/entropy_loss", "train/loss", "train/clip_range"}, "sb3"}, // before any episode ended
		{[]string{"Environment/Cumulative Reward", "Policy/Extrinsic Reward"}, "mlagents"},
		{[]string{"charts/episodic_return", "losses/old_approx_kl"}, "cleanrl"},
	} {
		if got := DetectPreset(c.keys); got != c.want {
			t.Errorf("DetectPreset(%q) = %q, want %q", c.keys, got, c.want)
		}
	}
}

// TBDir may name one event file instead of a directory: only that file is read.
func TestTensorBoardOneEventFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.out.tfevents.1")
	writeFile(t, path, rslrlEvents(5))
	writeFile(t, filepath.Join(dir, "events.out.tfevents.2"), rslrlEvents(40))
	r, err := Open(ReaderConfig{Source: SourceTensorBoard, Preset: "rsl_rl", TBDir: path})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if recs := readAll(t, r); len(recs) != 5 {
		t.Errorf("got %d records, want the 5 of the one file named", len(recs))
	}
}
