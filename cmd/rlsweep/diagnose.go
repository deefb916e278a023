package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// Placeholder until the owning issue lands; replaced whole by it.
func newDiagnoseCmd(f *Factory) *cobra.Command {
	return &cobra.Command{Use: "diagnose", Hidden: true, RunE: func(*cobra.Command, []string) error {
		return errors.New("diagnose: not built yet")
	}}
}
