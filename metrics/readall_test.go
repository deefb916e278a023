package metrics

import (
	"errors"
	"slices"
	"testing"
)

// scripted is a Reader whose Polls return the given batches in order, then nothing; Finish returns
// held.
type scripted struct {
	batches [][]int64
	held    []int64
	err     error
}

func (s *scripted) Poll() ([]Record, error) {
	if len(s.batches) == 0 {
		return nil, s.err
	}
	b := s.batches[0]
	s.batches = s.batches[1:]
	var recs []Record
	for _, step := range b {
		recs = append(recs, Record{Step: step})
	}
	return recs, nil
}

func (s *scripted) Finish() []Record {
	var recs []Record
	for _, step := range s.held {
		recs = append(recs, Record{Step: step})
	}
	return recs
}

func (s *scripted) Stats() ReaderStats { return ReaderStats{} }
func (s *scripted) Close() error       { return nil }

// TestReadAll: one empty Poll is not the end (a TensorBoard file may just have gone quiet), two in a
// row are; what the reader holds back comes last; an I/O error is returned.
func TestReadAll(t *testing.T) {
	r := &scripted{batches: [][]int64{{1, 2}, {}, {3}, {}, {}, {99}}, held: []int64{4}}
	recs, err := ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if got := steps(recs); !slices.Equal(got, []int64{1, 2, 3, 4}) {
		t.Errorf("ReadAll steps = %v, want [1 2 3 4]", got)
	}
	boom := errors.New("boom")
	if _, err := ReadAll(&scripted{batches: [][]int64{{1}}, err: boom}); !errors.Is(err, boom) {
		t.Errorf("ReadAll error = %v, want %v", err, boom)
	}
}
