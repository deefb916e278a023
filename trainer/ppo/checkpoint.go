package ppo

import (
	"encoding/gob"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/rlsweep/rlsweep/trainer/envs"
)

// checkpointFormat is bumped whenever the checkpoint layout changes.
const checkpointFormat = 1

// checkpoint is everything a Trainer needs to continue bit for bit: parameters, Adam state,
// normalisers, the generator, counters and the environments mid-episode. The Config is the caller's.
type checkpoint struct {
	Format          int
	Env             string
	ObsDim, NumEnvs int
	Params, M, V    []float64
	AdamT           int
	LR              float64
	// ConfigLR is the configuration's lr the trainer ran with (0 in checkpoints written before it
	// was kept): a trainer resumed with another lr scales an adaptive rate by the ratio.
	ConfigLR         float64
	ObsRMS, RetRMS   RunningMeanStd
	RetAcc, ObsN     []float64
	RNG              []byte
	Step             int64
	Iteration        int
	Vec              envs.VecState
	Window           []envs.Episode
	WindowNext       int
	EpisodesFinished int64
}

// Save writes the trainer's state to w (gob encoding; floats bit-exact, NaN included).
func (t *Trainer) Save(w io.Writer) error {
	rng, err := t.pcg.MarshalBinary()
	if err != nil {
		return fmt.Errorf("ppo: save generator: %w", err)
	}
	c := checkpoint{
		Format: checkpointFormat, Env: t.spec.Name, ObsDim: t.spec.ObsDim, NumEnvs: t.cfg.NumEnvs,
		Params: t.params, M: t.adam.M, V: t.adam.V, AdamT: t.adam.T, LR: t.lr, ConfigLR: t.cfg.LR,
		ObsRMS: t.obsRMS.clone(), RetRMS: t.retRMS.clone(), RetAcc: t.retAcc, ObsN: t.obsN,
		RNG: rng, Step: t.step, Iteration: t.iter, Vec: t.vec.State(),
		Window: t.window, WindowNext: t.windowNext, EpisodesFinished: t.episodes,
	}
	if err := gob.NewEncoder(w).Encode(&c); err != nil {
		return fmt.Errorf("ppo: save checkpoint: %w", err)
	}
	return nil
}

// Restore replaces the trainer's state with a checkpoint written by Save from a trainer with the
// same environment and network shapes. The hyperparameters stay the trainer's own (its Config): a
// resume may change lr, clip, ent_coef, vf_coef, max_grad_norm, gamma and gae_lambda, and the next
// iteration trains with them. With adaptive_lr the adapted rate goes on, scaled by the new lr over
// the checkpoint's, within adaptive_lr's bounds [1e-5, 1e-2].
func (t *Trainer) Restore(r io.Reader) error {
	var c checkpoint
	if err := gob.NewDecoder(r).Decode(&c); err != nil {
		return fmt.Errorf("ppo: read checkpoint: %w", err)
	}
	if c.Format != checkpointFormat || c.Env != t.spec.Name || c.ObsDim != t.spec.ObsDim ||
		c.NumEnvs != t.cfg.NumEnvs || len(c.Params) != len(t.params) || len(c.ObsN) != len(t.obsN) {
		return fmt.Errorf("ppo: checkpoint: got format %d, env %q, %d envs, %d params; want format %d, env %q, %d envs, %d params",
			c.Format, c.Env, c.NumEnvs, len(c.Params), checkpointFormat, t.spec.Name, t.cfg.NumEnvs, len(t.params))
	}
	if err := t.pcg.UnmarshalBinary(c.RNG); err != nil {
		return fmt.Errorf("ppo: checkpoint generator: %w", err)
	}
	if err := t.vec.SetState(c.Vec); err != nil {
		return fmt.Errorf("ppo: checkpoint: %w", err)
	}
	copy(t.params, c.Params)
	copy(t.adam.M, c.M)
	copy(t.adam.V, c.V)
	t.adam.T, t.lr = c.AdamT, c.LR
	if t.cfg.AdaptiveLR && c.ConfigLR > 0 && c.ConfigLR != t.cfg.LR {
		t.lr = math.Min(1e-2, math.Max(1e-5, c.LR*t.cfg.LR/c.ConfigLR))
	}
	*t.obsRMS, *t.retRMS = c.ObsRMS, c.RetRMS
	copy(t.retAcc, c.RetAcc)
	copy(t.obsN, c.ObsN)
	t.step, t.iter = c.Step, c.Iteration
	t.window, t.windowNext, t.episodes = c.Window, c.WindowNext, c.EpisodesFinished
	return nil
}

// SaveFile writes a checkpoint to path atomically: to a temporary file in the same directory, synced,
// then renamed over path, so a reader never sees a partial checkpoint.
func (t *Trainer) SaveFile(path string) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("ppo: save checkpoint: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o644); err != nil { // CreateTemp makes it 0600; a checkpoint is no secret
		return fmt.Errorf("ppo: save checkpoint: %w", err)
	}
	if err = t.Save(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("ppo: save checkpoint: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("ppo: save checkpoint: %w", err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("ppo: save checkpoint: %w", err)
	}
	return nil
}

// RestoreFile restores a checkpoint from path.
func (t *Trainer) RestoreFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("ppo: restore checkpoint: %w", err)
	}
	defer f.Close()
	return t.Restore(f)
}
