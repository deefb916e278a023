package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
