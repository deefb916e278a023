package activities

import "github.com/rlsweep/rlsweep/sweepstore"

// sweepStore reads and writes the sweep's stored files (spec, plan, results, divergence dumps, resume
// points, …) as their types; metrics, logs and checkpoints go through their own artifacts helpers.
func (a *Activities) sweepStore() *sweepstore.Store { return sweepstore.New(a.Store) }
