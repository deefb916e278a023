package activities

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/trainer"
)

func putBytes(ctx context.Context, s Store, key string, b []byte) error {
	return s.Put(ctx, key, bytes.NewReader(b))
}

// getBytes reads the whole object under key; a missing one wraps artifacts.ErrNotFound.
func getBytes(ctx context.Context, s Store, key string) ([]byte, error) {
	rc, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	return b, nil
}

// getJSON decodes the JSON object under key into v; a missing one wraps artifacts.ErrNotFound.
func getJSON(ctx context.Context, s Store, key string, v any) error {
	b, err := getBytes(ctx, s, key)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", key, err)
	}
	return nil
}

// storedBefore returns the lines of the stored JSON-lines object under key whose step is below step;
// no object yet is no lines.
func storedBefore(ctx context.Context, s Store, key string, step int64) ([]byte, error) {
	rc, err := s.Get(ctx, key)
	if errors.Is(err, artifacts.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read stored metrics: %w", err)
	}
	defer rc.Close()
	// Lines of any length: a stored line is a record re-encoded, which can be several times the size
	// the reader allowed the trainer's line (json escapes <, > and & as six bytes each).
	var out []byte
	br := bufio.NewReaderSize(rc, 64*1024)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.TrimSuffix(line, []byte{'\n'})
			if rec, perr := trainer.ParseJSONLine(line); perr == nil && rec.Step < step {
				out = append(append(out, line...), '\n')
			}
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read stored metrics: %w", err)
		}
	}
}
