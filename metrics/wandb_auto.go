package metrics

import (
	"errors"
)

// autoTail is source auto: it follows both the W&B run file and the TensorBoard event files, and
// settles on whichever yields records first; the other is closed and never read again. A trainer that
// calls wandb.init(sync_tensorboard=True) writes both, with the same scalars: when both yield in the
// same Poll, TensorBoard is chosen, since its steps are the trainer's own global_step while W&B's
// _step counts wandb.log calls. TensorBoard counts as yielding as soon as it holds a step's scalars it
// has not returned yet (it returns a step once the next begins, or once its file has gone quiet).
type autoTail struct {
	wb     *WandbTail
	tb     *TensorBoardTail
	chosen Reader
}

// Poll returns the chosen source's records; before one is chosen, those of the first to yield.
func (a *autoTail) Poll() ([]Record, error) {
	if a.chosen != nil {
		return a.chosen.Poll()
	}
	rt, errT := a.tb.Poll()
	if len(rt) > 0 || a.tb.holding() {
		a.choose(a.tb)
		return rt, errT
	}
	rw, errW := a.wb.Poll()
	if len(rw) > 0 {
		a.choose(a.wb)
		return rw, errW
	}
	return nil, errors.Join(errT, errW)
}

func (a *autoTail) choose(r Reader) {
	a.chosen = r
	if r == Reader(a.tb) {
		a.wb.Close()
	} else {
		a.tb.Close()
	}
}

// Finish takes what the chosen source holds back; before one is chosen, TensorBoard's last step if it
// has one, else it settles on W&B.
func (a *autoTail) Finish() []Record {
	if a.chosen == nil {
		if recs := a.tb.Finish(); len(recs) > 0 {
			a.choose(a.tb)
			return recs
		}
		a.choose(a.wb)
	}
	if f, ok := a.chosen.(Finisher); ok {
		return f.Finish()
	}
	return nil
}

// Stats returns the chosen source's counts, its Source naming it and its path; before one is chosen,
// the malformed input both have met.
func (a *autoTail) Stats() ReaderStats {
	switch a.chosen {
	case nil:
		w, t := a.wb.Stats(), a.tb.Stats()
		st := ReaderStats{Malformed: w.Malformed + t.Malformed, LastError: w.LastError}
		if t.LastError != "" {
			st.LastError = t.LastError
		}
		return st
	case Reader(a.tb):
		st := a.tb.Stats()
		st.Source = SourceTensorBoard + " (" + a.tb.dir + ")"
		return st
	}
	return a.wb.Stats()
}

// Close releases both sources' files.
func (a *autoTail) Close() error { return errors.Join(a.wb.Close(), a.tb.Close()) }

// holding reports whether some event file holds a step's scalars not yet returned.
func (t *TensorBoardTail) holding() bool {
	for _, f := range t.files {
		if f.grouped {
			return true
		}
	}
	return false
}
