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
	var out []byte
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for sc.Scan() {
		rec, err := trainer.ParseJSONLine(sc.Bytes())
		if err != nil || rec.Step >= step {
			continue
		}
		out = append(append(out, sc.Bytes()...), '\n')
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read stored metrics: %w", err)
	}
	return out, nil
}
