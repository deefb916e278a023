// Command rlsweep runs hyperparameter sweeps of PPO training on Temporal.
//
// Exit codes: 0 ok, 1 error, 2 invalid input (a spec, a flag or an argument), 3 a diagnostic stop rule
// fired (rlsweep diagnose), 4 the sweep or trial being watched ended without success, 130 a watch was
// interrupted (the sweep goes on).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes, documented in the README.
const (
	exitOK       = 0
	exitError    = 1
	exitInvalid  = 2
	exitDiverged = 3
	exitFailed   = 4
	// exitInterrupted: Ctrl-C or SIGTERM stopped a watch; the sweep goes on running (128 + SIGINT).
	exitInterrupted = 130
)

func main() {
	if err := restoreCredentials(); err != nil {
		fmt.Fprintln(os.Stderr, "rlsweep:", err)
		os.Exit(exitError)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first Ctrl-C or SIGTERM asks for a graceful stop (a worker lets its trainers checkpoint);
		// from then on the signals' default applies, so a second one ends the process at once.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], newFactory())
	stop()
	os.Exit(code)
}

// run executes the command line and maps the result to an exit code.
func run(ctx context.Context, args []string, f *Factory) int {
	root := newRootCmd(f)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ec *exitCodeError
	if errors.As(err, &ec) {
		if ec.err != nil {
			fmt.Fprintln(f.ErrOut, "rlsweep:", ec.err)
		}
		return ec.code
	}
	fmt.Fprintln(f.ErrOut, "rlsweep:", err)
	return exitError
}

// exitCodeError carries the exit code a failure should end the process with.
type exitCodeError struct {
	code int
	err  error
}

func (e *exitCodeError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitCodeError) Unwrap() error { return e.err }

// invalidInput marks err as bad input from the user: exit code 2.
func invalidInput(err error) error { return &exitCodeError{code: exitInvalid, err: err} }

// withExitCode ends the process with code, printing err if it is not nil.
func withExitCode(code int, err error) error { return &exitCodeError{code: code, err: err} }
