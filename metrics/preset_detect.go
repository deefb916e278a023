package metrics

import "sort"

// presetDetector adds to the records of a reader opened without metrics.preset the canonical metrics
// the preset their tags name (DetectPreset) maps them to: a Stable-Baselines3 script that writes
// TensorBoard, progress.csv or logs to W&B with its usual tags (rollout/ep_rew_mean,
// train/entropy_loss, ...) has its reward, entropy and losses read as such, as `rlsweep diagnose` reads
// them, with no trainer.metrics.preset to set. Each tag also keeps its own name: a metric.name, an
// early_terminate metric or a report that names the tag the trainer logs (charts/episodic_return)
// still finds it. The preset is told once, from the keys of the records read so far, at the first Poll
// whose records name one; records before that pass as they are. Tags mapped by metrics.tags, and the
// canonical metrics they map to, keep their mapping. Steps are not converted: an rsl_rl run's
// iterations stay iterations unless its preset is set.
type presetDetector struct {
	Reader
	custom  map[string]string // metrics.tags: tag → canonical name ("-" prefix for a negated one)
	keys    map[string]bool
	preset  string
	mapping Mapping
}

// detectPreset wraps r; custom is metrics.tags.
func detectPreset(r Reader, custom map[string]string) *presetDetector {
	return &presetDetector{Reader: r, custom: custom, keys: map[string]bool{}}
}

func (d *presetDetector) Poll() ([]Record, error) {
	recs, err := d.Reader.Poll()
	return d.apply(recs), err
}

// Finish returns what the wrapped reader held back, mapped; nil when it holds nothing back.
func (d *presetDetector) Finish() []Record {
	if f, ok := d.Reader.(Finisher); ok {
		return d.apply(f.Finish())
	}
	return nil
}

// Stats are the wrapped reader's, with the preset told (ReaderStats.Preset).
func (d *presetDetector) Stats() ReaderStats {
	st := d.Reader.Stats()
	st.Preset = d.preset
	return st
}

func (d *presetDetector) apply(recs []Record) []Record {
	if d.preset == "" && len(recs) > 0 {
		grew := false
		for _, r := range recs {
			for k := range r.Values {
				if !d.keys[k] {
					d.keys[k], grew = true, true
				}
			}
		}
		if !grew {
			// The same keys as before name no preset: a trainer writing canonical names (JSON lines)
			// costs its records nothing more than this look-up.
			return recs
		}
		keys := make([]string, 0, len(d.keys))
		for k := range d.keys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if p := DetectPreset(keys); p != "" {
			d.preset, d.mapping = p, d.presetMapping(p)
		}
	}
	for _, r := range recs {
		var added map[string]float64
		for k, v := range r.Values {
			if t, ok := d.mapping[k]; ok {
				if _, has := r.Values[t.Metric]; !has {
					if added == nil {
						added = map[string]float64{}
					}
					added[t.Metric] = v * t.Scale
				}
			}
		}
		for k, v := range added {
			r.Values[k] = v
		}
	}
	return recs
}

// presetMapping is preset p's mapping less what metrics.tags decides: its tags, and the canonical
// names they map to.
func (d *presetDetector) presetMapping(p string) Mapping {
	taken := map[string]bool{}
	for _, name := range d.custom {
		if len(name) > 0 && name[0] == '-' {
			name = name[1:]
		}
		taken[name] = true
	}
	m := Mapping{}
	for tag, t := range presets[p] {
		if _, mapped := d.custom[tag]; mapped || taken[t.Metric] {
			continue
		}
		m[tag] = t
	}
	return m
}
