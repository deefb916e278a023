package activities

import (
	"context"

	"github.com/rlsweep/rlsweep/sweepstore"
)

func putBytes(ctx context.Context, s Store, key string, b []byte) error {
	return sweepstore.PutBytes(ctx, s, key, b)
}

// getBytes reads the whole object under key; a missing one wraps artifacts.ErrNotFound.
func getBytes(ctx context.Context, s Store, key string) ([]byte, error) {
	return sweepstore.GetBytes(ctx, s, key)
}

// getJSON decodes the JSON object under key into v; a missing one wraps artifacts.ErrNotFound.
func getJSON(ctx context.Context, s Store, key string, v any) error {
	return sweepstore.GetJSON(ctx, s, key, v)
}
