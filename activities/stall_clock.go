package activities

import "time"

// stallClock measures a trainer's silence for the stall rule (trainer.stall_timeout): the time since
// the worker last read a record from it, less the time the worker itself spent meanwhile taking in
// records and storing them (a checkpoint's upload and the metrics flushes, with every retry while the
// store is away). While the worker waits on the store it reads nothing, whatever the trainer writes;
// that wait is the worker's, and the trainer is judged only on the time the worker was watching it.
type stallClock struct {
	last time.Time     // when the last record was read
	busy time.Duration // the worker's own time since then
}

// heard notes a record read at now: the silence starts again.
func (c *stallClock) heard(now time.Time) { c.last, c.busy = now, 0 }

// worked notes d spent by the worker on its own work (storing, reading) since the last record.
func (c *stallClock) worked(d time.Duration) { c.busy += max(d, 0) }

// silent is how long the trainer has been silent while the worker watched it, at now.
func (c *stallClock) silent(now time.Time) time.Duration { return now.Sub(c.last) - c.busy }
