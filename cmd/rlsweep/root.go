package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Factory holds what every command needs from the outside world, so tests can swap it.
type Factory struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

func newFactory() *Factory {
	return &Factory{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

func newRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "rlsweep",
		Short:         "Hyperparameter sweeps of PPO training on Temporal, with probe checks and RL diagnostics",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(f.Out)
	root.SetErr(f.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return invalidInput(err) })
	root.AddCommand(
		newTrainCmd(f),
		newDiagnoseCmd(f),
	)
	return root
}
