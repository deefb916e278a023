//go:build integration

package integration

import (
	"io/fs"
	"path/filepath"
)

func walkDirs(root string, visit func(name string)) error {
	return filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			visit(d.Name())
		}
		return nil
	})
}
